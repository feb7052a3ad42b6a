public import SystemPackage

/// Reads a small file (a bike list, a configuration) whole, refusing anything over a size limit so a wrong
/// path (a disk image, /dev/zero) fails with a clear line instead of eating the Pi's memory.
public enum WholeFile {
    public static func read(path: String, limit: Int) throws(FileReadError) -> [UInt8] {
        let descriptor: FileDescriptor
        do {
            descriptor = try FileDescriptor.open(FilePath(path), .readOnly, options: [.closeOnExec])
        } catch {
            throw FileReadError(path: path, error)
        }
        defer { try? descriptor.close() }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count: Int
            do {
                count = try chunk.withUnsafeMutableBytes { try descriptor.read(into: $0, retryOnInterrupt: true) }
            } catch {
                throw FileReadError(path: path, error)
            }
            if count == 0 { return bytes }
            guard bytes.count + count <= limit else {
                throw FileReadError(path: path, reason: "larger than the \(Self.size(limit)) limit")
            }
            bytes.append(contentsOf: chunk[..<count])
        }
    }
}

extension WholeFile {
    /// `4096 bytes`, `64 KiB`, `16 MiB`: the largest unit that says the limit exactly (an API key's 4,096-byte limit
    /// read "0 MiB" when every limit was said in MiB).
    static func size(_ bytes: Int) -> String {
        if bytes >= 1 << 20, bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
        if bytes >= 1 << 10, bytes % (1 << 10) == 0, bytes > 4096 { return "\(bytes >> 10) KiB" }
        return "\(bytes) bytes"
    }
}

/// Why a file could not be read, worded for the one line a user sees.
public struct FileReadError: Error, CustomStringConvertible {
    public var path: String
    public var reason: String
    /// The system's error, when the system refused: what a caller tells cases apart by, never the wording.
    public var errno: Errno?

    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    init(path: String, _ error: any Error) {
        self.init(path: path, reason: Self.describe(error))
        errno = error as? Errno
    }

    public var description: String { "\(path): \(reason)" }

    /// swift-system's message in a line's middle: "no such file or directory", not "No such…".
    public static func describe(_ error: any Error) -> String {
        if let errno = error as? Errno {
            return errno.description.prefix(1).lowercased() + errno.description.dropFirst()
        }
        return String(describing: error)
    }
}
