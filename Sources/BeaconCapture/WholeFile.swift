import SystemPackage

/// Reads a small file (a bike list, a configuration) whole, refusing anything over a size limit so a wrong
/// path (a disk image, /dev/zero) fails with a clear line instead of eating the Pi's memory.
public enum WholeFile {
    public static func read(path: String, limit: Int) throws(FileReadError) -> [UInt8] {
        let descriptor: FileDescriptor
        do {
            descriptor = try FileDescriptor.open(FilePath(path), .readOnly, options: [.closeOnExec])
        } catch {
            throw FileReadError(path: path, reason: CaptureFile.describe(error))
        }
        defer { try? descriptor.close() }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count: Int
            do {
                count = try chunk.withUnsafeMutableBytes { try descriptor.read(into: $0, retryOnInterrupt: true) }
            } catch {
                throw FileReadError(path: path, reason: CaptureFile.describe(error))
            }
            if count == 0 { return bytes }
            guard bytes.count + count <= limit else {
                throw FileReadError(path: path, reason: "larger than the \(limit / 1024 / 1024) MiB limit")
            }
            bytes.append(contentsOf: chunk[..<count])
        }
    }
}

/// Why a file could not be read, worded for the one line a user sees.
public struct FileReadError: Error, CustomStringConvertible {
    public var path: String
    public var reason: String

    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    public var description: String { "\(path): \(reason)" }
}
