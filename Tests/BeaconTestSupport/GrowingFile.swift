import Foundation

/// The text of a file another process may still be writing (a server's log), read with read(2): FoundationEssentials'
/// file reading leaked its buffer when the file grew while it read (LeakSanitizer, in tests reading a running
/// server's log).
public enum GrowingFile {
    public static func text(_ path: String) -> String {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return "" }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += chunk[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
