import Formats
import Foundation

/// `--ca-cert FILE`: the CA kept between starts. The first start writes the CA certificate to FILE
/// and its private key to FILE.key (mode 600); a later start that finds both reads them back and
/// signs a fresh server certificate with the same CA, so a client's CA bundle keeps working.
extension TLSMaterial {
    /// Where the CA's key is kept: beside the certificate.
    static func keyPath(of certificate: String) -> String { certificate + ".key" }

    /// The TLS material for a server whose CA certificate goes to `caCertPath` (nil: not kept).
    /// Exit 2 naming the file when a kept CA cannot be used: a key others can read, a key that
    /// is not the certificate's, a CA that expires within a day, unreadable PEM.
    static func prepared(caCertPath: String?) throws(ServeError) -> TLSMaterial {
        guard let path = caCertPath else {
            do { return try TLSMaterial() } catch { throw ServeError.input(.caCertificate, value: nil, problem: "cannot make the CA: \(error)") }
        }
        let keyPath = keyPath(of: path)
        let manager = FileManager.default
        if manager.fileExists(atPath: path), let attributes = try? manager.attributesOfItem(atPath: keyPath) {
            guard attributes[.type] as? FileAttributeType == .typeRegular else {
                throw ServeError.input(.caCertificate, value: keyPath, problem: "is not a regular file; allowed the CA's key as a plain file")
            }
            let mode = (attributes[.posixPermissions] as? Int) ?? 0o777
            guard mode & 0o077 == 0 else {
                throw ServeError.input(.caCertificate, value: keyPath, problem: "can be read by others (mode \(String(mode, radix: 8))); allowed a key only its owner reads (chmod 600)")
            }
            let certificate: String, key: String
            do {
                certificate = String(decoding: try BoundedFile.read(path, maxBytes: 64 << 10), as: UTF8.self)
                key = String(decoding: try BoundedFile.read(keyPath, maxBytes: 64 << 10), as: UTF8.self)
            } catch {
                throw ServeError.input(.caCertificate, value: path, problem: "cannot be read back: \(error.problem)")
            }
            do { return try TLSMaterial(existing: (certificate, key)) } catch {
                throw ServeError.input(.caCertificate, value: path, problem: "cannot be used again: \(error)")
            }
        }
        let material: TLSMaterial
        do { material = try TLSMaterial() } catch { throw ServeError.input(.caCertificate, value: path, problem: "cannot make the CA: \(error)") }
        do { try OutputFile.write(material.caPEM, to: path, role: "the CA certificate") } catch {
            throw ServeError.input(.caCertificate, value: path, problem: error.description)
        }
        try writePrivately(material.caKeyPEM, to: keyPath)
        return material
    }

    /// Writes `text` to `path` as a file only its owner can read: made at mode 600 under a
    /// temporary name beside it, then moved into place (a key never exists readable by others).
    static func writePrivately(_ text: String, to path: String) throws(ServeError) {
        let temporary = path + ".\(getpid()).tmp"
        let made = FileManager.default.createFile(atPath: temporary, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600])
        guard made, rename(temporary, path) == 0 else {
            try? FileManager.default.removeItem(atPath: temporary)
            throw ServeError.input(.caCertificate, value: path, problem: "the CA's key cannot be written: \(String(cString: strerror(errno)))")
        }
    }
}
