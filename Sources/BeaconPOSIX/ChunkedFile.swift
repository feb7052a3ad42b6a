import SystemPackage

/// A file read a piece at a time, so a large bike list or cache never sits in memory whole.
public enum ChunkedFile {
    /// Calls `body` with each piece of the file, up to `limit` bytes in all (more is an error). nil when the file
    /// does not exist.
    public static func read(
        path: String, limit: Int, chunk: Int = 64 * 1024, _ body: (UnsafeRawBufferPointer) throws -> Void
    ) throws -> Int? {
        let descriptor: FileDescriptor
        do {
            descriptor = try FileDescriptor.open(FilePath(path), .readOnly, options: [.closeOnExec])
        } catch Errno.noSuchFileOrDirectory {
            return nil
        }
        defer { try? descriptor.close() }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 1)
        defer { buffer.deallocate() }
        var total = 0
        while true {
            let count = try descriptor.read(into: buffer, retryOnInterrupt: true)
            if count == 0 { return total }
            total += count
            guard total <= limit else { throw ChunkedFileError(path: path, limit: limit) }
            try body(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
        }
    }
}

public struct ChunkedFileError: Error, CustomStringConvertible {
    public var path: String
    public var limit: Int
    public var description: String { "\(path): larger than \(limit) bytes" }
}
