/// The hashes behind `uniqueString` and `guid`.
///
/// `uniqueString`: the arguments joined with `-`, hashed with the 64-bit MurmurHash variant
/// Azure Resource Manager uses (two 32-bit lanes, 8 bytes a round), the hash's top 65 bits
/// written as 13 characters of lowercase RFC 4648 base32. `ARMHashTests` checks it against the
/// values a public re-implementation states as Bicep's outputs (`uniqueString('test')` is
/// `rbgf3xv4ufgzg`); it has not been checked against a live deployment here.
///
/// `guid`: deterministic (same arguments, same text) but not Azure's value (Azure uses a
/// name-based UUID over SHA-1); no field rehearse reads depends on it.
enum ARMHash {
    static func uniqueString(_ values: [String]) -> String {
        let hash = murmur64(Array(values.joined(separator: "-").utf8))
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz234567")
        var out = ""
        var h = hash
        for _ in 0..<13 {
            out.append(alphabet[Int(h >> 59)])
            h <<= 5
        }
        return out
    }

    static func guid(_ values: [String]) -> String {
        let bytes = Array(values.joined(separator: "-").utf8)
        let high = murmur64(bytes), low = murmur64(bytes + [0x67])
        var hex = String(high, radix: 16).leftPadded(16) + String(low, radix: 16).leftPadded(16)
        // A version-5 shape (xxxxxxxx-xxxx-5xxx-yxxx-xxxxxxxxxxxx), as Azure's guid() has.
        var chars = Array(hex)
        chars[12] = "5"
        chars[16] = Array("89ab")[Int(String(chars[16]), radix: 16)! % 4]
        hex = String(chars)
        let parts = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(chars[$0]) }
        return parts.joined(separator: "-")
    }

    static func murmur64(_ bytes: [UInt8]) -> UInt64 {
        let c1: UInt32 = 0xAB0E_9789, c2: UInt32 = 0x239B_961B
        func rotl(_ x: UInt32, _ r: UInt32) -> UInt32 { (x << r) | (x >> (32 - r)) }
        func le32(_ at: Int, _ count: Int) -> UInt32 {
            var v: UInt32 = 0
            for k in 0..<count { v |= UInt32(bytes[at + k]) << (8 * UInt32(k)) }
            return v
        }
        var h1: UInt32 = 0, h2: UInt32 = 0
        var i = 0
        while i + 8 <= bytes.count {
            var k1 = le32(i, 4), k2 = le32(i + 4, 4)
            k1 = rotl(k1 &* c2, 15) &* c1
            k2 = rotl(k2 &* c1, 17) &* c2
            h1 = rotl(h1 ^ k1, 19) &+ h2
            h1 = h1 &* 5 &+ 0x561C_CD1B
            h2 = rotl(h2 ^ k2, 13) &+ h1
            h2 = h2 &* 5 &+ 0x0BCA_A747
            i += 8
        }
        let rest = bytes.count - i
        if rest > 0 {
            let k1 = rotl(le32(i, min(rest, 4)) &* c2, 15) &* c1
            h1 ^= k1
            if rest > 4 {
                let k2 = rotl(le32(i + 4, rest - 4) &* c1, 17) &* c2
                h2 ^= k2
            }
        }
        let length = UInt32(truncatingIfNeeded: bytes.count)
        h2 ^= length
        h1 = (h1 ^ length) &+ h2
        h2 = h2 &+ h1
        func mix(_ x: UInt32) -> UInt32 {
            var v = (x ^ (x >> 16)) &* 0x85EB_CA6B
            v = (v ^ (v >> 13)) &* 0xC2B2_AE35
            return v ^ (v >> 16)
        }
        h1 = mix(h1)
        h2 = mix(h2)
        h1 = h1 &+ h2
        h2 = h2 &+ h1
        return UInt64(h2) << 32 | UInt64(h1)
    }
}
