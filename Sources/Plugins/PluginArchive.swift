import Crypto
import Formats
import Foundation

/// A bundle packed as a POSIX ustar archive (`tar -tf` lists it), made to be reproducible: the
/// same files give the same bytes, so the same SHA-256. Every entry is a regular file under
/// `NAME-VERSION/`, sorted by path, with mode 0644, owner 0:0, no user or group names and time 0.
/// Uncompressed: bundles are a few kilobytes of Lua, and the digest is over these exact bytes.
public enum PluginArchive {
    /// Bounds on what is read back: one file, all files, entries, the archive itself.
    public static let maxFileBytes = BoundedFile.maxSourceBytes
    /// Bytes of all files of one archive together.
    public static let maxTotalBytes = 32 << 20
    /// Entries (files and folders) of one archive.
    public static let maxEntries = 1000
    /// Bytes of one archive, read or downloaded.
    public static let maxArchiveBytes = 40 << 20

    /// The archive's file name for a manifest: `NAME-VERSION.tar`.
    public static func fileName(_ manifest: PluginManifest) -> String { "\(manifest.name)-\(manifest.version).tar" }

    /// Packs the bundle in `folder` (its manifest read and checked first).
    public static func pack(_ folder: String) throws(PluginProblem) -> (manifest: PluginManifest, bytes: [UInt8]) {
        let manifestData: [UInt8]
        do { manifestData = try BoundedFile.readInside(folder, PluginManifest.fileName, maxBytes: PluginManifest.maxBytes) } catch {
            throw PluginProblem("\(folder): \(error)")
        }
        let manifest = try PluginManifest.parse(String(decoding: manifestData, as: UTF8.self), file: folder + "/" + PluginManifest.fileName)
        let prefix = "\(manifest.name)-\(manifest.version)/"
        var out: [UInt8] = []
        for file in try BundleFiles.list(folder) {
            let data: [UInt8]
            do { data = try BoundedFile.readInside(folder, file, maxBytes: maxFileBytes) } catch { throw PluginProblem("\(folder)/\(file): \(error)") }
            out += try header(path: prefix + file, size: data.count)
            out += data
            out += [UInt8](repeating: 0, count: (512 - data.count % 512) % 512)
        }
        out += [UInt8](repeating: 0, count: 1024)
        return (manifest, out)
    }

    /// SHA-256 of `bytes`, hex.
    public static func sha256(_ bytes: [UInt8]) -> String { BundleFiles.hex(SHA256.hash(data: bytes)) }

    private static func header(path: String, size: Int) throws(PluginProblem) -> [UInt8] {
        var h = [UInt8](repeating: 0, count: 512)
        let bytes = Array(path.utf8)
        // ustar: names up to 100 bytes, or a prefix of up to 155 and a name of up to 100.
        var name = bytes, prefix: [UInt8] = []
        if bytes.count > 100 {
            guard let cut = bytes.indices.filter({ bytes[$0] == 0x2F && $0 <= 155 && bytes.count - $0 - 1 <= 100 }).last else {
                throw PluginProblem("\(path): the path is too long for a bundle archive (at most 255 bytes, 100 after the last folder)")
            }
            prefix = Array(bytes[..<cut])
            name = Array(bytes[(cut + 1)...])
        }
        func put(_ field: [UInt8], at offset: Int) { for (i, b) in field.enumerated() { h[offset + i] = b } }
        func octal(_ value: Int, width: Int) -> [UInt8] {
            let digits = String(value, radix: 8)
            return Array((String(repeating: "0", count: width - 1 - digits.count) + digits).utf8) + [0]
        }
        put(name, at: 0)
        put(octal(0o644, width: 8), at: 100)
        put(octal(0, width: 8), at: 108)
        put(octal(0, width: 8), at: 116)
        put(octal(size, width: 12), at: 124)
        put(octal(0, width: 12), at: 136)
        put(Array("        ".utf8), at: 148)
        h[156] = 0x30  // '0': a regular file
        put(Array("ustar".utf8) + [0], at: 257)
        put(Array("00".utf8), at: 263)
        put(prefix, at: 345)
        let sum = h.reduce(0) { $0 + Int($1) }
        put(Array((String(repeating: "0", count: 6 - String(sum, radix: 8).count) + String(sum, radix: 8)).utf8) + [0, 0x20], at: 148)
        return h
    }

    /// Reads an archive as `pack` writes it, refusing anything else: entries other than regular
    /// files and folders (links, devices, extended headers), absolute paths, `..`, hidden names,
    /// paths outside `NAME-VERSION/`, bad checksums, and sizes past the bounds. Returns files by path relative
    /// to the bundle, and the manifest they hold.
    public static func read(_ bytes: [UInt8], source: String) throws(PluginProblem) -> (manifest: PluginManifest, files: [String: [UInt8]]) {
        func refuse(_ why: String) -> PluginProblem { PluginProblem("\(source): \(why)") }
        guard bytes.count <= maxArchiveBytes else { throw refuse("the archive is over \(maxArchiveBytes) bytes") }
        var files: [String: [UInt8]] = [:]
        var root: String?
        var offset = 0, total = 0, entries = 0
        while offset + 512 <= bytes.count {
            let h = Array(bytes[offset..<offset + 512])
            if h.allSatisfy({ $0 == 0 }) { break }
            entries += 1
            guard entries <= maxEntries else { throw refuse("more than \(maxEntries) entries") }
            func text(_ start: Int, _ length: Int) -> String {
                let field = h[start..<start + length]
                return String(decoding: field.prefix { $0 != 0 }, as: UTF8.self)
            }
            func number(_ start: Int, _ length: Int) -> Int? {
                let digits = text(start, length).trimmingCharacters(in: CharacterSet(charactersIn: " \0"))
                return digits.isEmpty ? 0 : Int(digits, radix: 8)
            }
            guard text(257, 5) == "ustar" else { throw refuse("entry \(entries) is not a ustar header") }
            var check = h
            for i in 148..<156 { check[i] = 0x20 }
            guard number(148, 8) == check.reduce(0, { $0 + Int($1) }) else { throw refuse("entry \(entries) has a bad header checksum") }
            let prefix = text(345, 155), name = text(0, 100)
            let path = prefix.isEmpty ? name : prefix + "/" + name
            guard let size = number(124, 12), size >= 0 else { throw refuse("\(path): a bad size field") }
            let type = h[156]
            let components = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            guard !path.hasPrefix("/"), !components.contains(".."), !components.contains(".") else {
                throw refuse("\(path): absolute paths and '.' or '..' are refused")
            }
            // Hidden names are what `plugins pack` leaves out and `plugins verify` does not see:
            // a bundle holding one could never be verified.
            if let hidden = components.dropFirst().first(where: { $0.hasPrefix(".") }) {
                throw refuse("\(path): '\(hidden)' is a hidden name (starting with '.'); a bundle holds no hidden files or folders")
            }
            let head = components[0]
            if root == nil { root = head }
            guard head == root, components.count >= 2 else { throw refuse("\(path): every entry must be inside one folder \(root ?? "")/") }
            let relative = components.dropFirst().filter { !$0.isEmpty }.joined(separator: "/")
            offset += 512
            switch type {
            case 0x30, 0:
                guard !relative.isEmpty, !path.hasSuffix("/") else { throw refuse("\(path): a file needs a name") }
                guard size <= maxFileBytes else { throw refuse("\(path): \(size) bytes, over the \(maxFileBytes) allowed for one file") }
                total += size
                guard total <= maxTotalBytes else { throw refuse("the files add up to more than \(maxTotalBytes) bytes") }
                guard offset + size <= bytes.count else { throw refuse("\(path): the archive ends inside this file") }
                guard files[relative] == nil else { throw refuse("\(path): the archive holds this file twice") }
                files[relative] = Array(bytes[offset..<offset + size])
                offset += (size + 511) / 512 * 512
            case 0x35:
                guard size == 0 else { throw refuse("\(path): a folder entry with a size") }
            case 0x31, 0x32:
                throw refuse("\(path): links are refused in a bundle archive")
            default:
                throw refuse("\(path): entry type '\(Character(Unicode.Scalar(type)))' is refused; only regular files and folders")
            }
        }
        guard let manifestBytes = files[PluginManifest.fileName] else { throw refuse("no \(PluginManifest.fileName) at the top of the bundle") }
        let manifest = try PluginManifest.parse(String(decoding: manifestBytes, as: UTF8.self), file: "\(source): \(PluginManifest.fileName)")
        guard root == "\(manifest.name)-\(manifest.version)" else {
            throw refuse("its folder is \(root ?? "") but the manifest says \(manifest.name) \(manifest.version)")
        }
        return (manifest, files)
    }

    /// Writes `files` into a new folder `destination` (it must not exist), creating subfolders.
    static func unpack(_ files: [String: [UInt8]], into destination: String) throws(PluginProblem) {
        let fm = FileManager.default
        guard !fm.fileExists(atPath: destination) else { throw PluginProblem("\(destination) already exists") }
        do {
            try fm.createDirectory(atPath: destination, withIntermediateDirectories: true)
            for (relative, data) in files.sorted(by: { $0.key < $1.key }) {
                let path = destination + "/" + relative
                try fm.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                do { try OutputFile.write(data, to: path, role: "the bundle file") } catch { throw PluginProblem(error.description) }
            }
        } catch let problem as PluginProblem {
            throw problem
        } catch {
            throw PluginProblem("cannot write into \(destination): \(error.localizedDescription)")
        }
    }
}
