import Foundation

/// A fresh directory under the system's temporary directory, removed by `remove()`.
public struct TemporaryDirectory: Sendable {
    public let path: String

    public init(_ label: String = "beacond") throws {
        try self.init(label, under: FileManager.default.temporaryDirectory.path)
    }

    /// Under `parent` instead (`/dev/shm`, for a test whose fsyncs would otherwise load the disk the suite shares).
    public init(_ label: String, under parent: String) throws {
        path = parent + "/\(label)-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    public func file(_ name: String) -> String { path + "/" + name }

    public func remove() { try? FileManager.default.removeItem(atPath: path) }
}
