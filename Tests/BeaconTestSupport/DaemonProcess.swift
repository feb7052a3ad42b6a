public import Foundation

/// A `beacond` (or `bike-registry`) process started in the background, as systemd would: its output goes to files, it can be
/// signalled, and its exit is awaited with a deadline.
public final class DaemonProcess {
    public let process = Process()
    public let stdoutPath: String
    public let stderrPath: String

    public init(
        _ arguments: [String], executable: URL = BeacondRun.binary, environment: [String: String] = [:],
        logDirectory: String, name: String
    ) throws {
        stdoutPath = "\(logDirectory)/\(name).out"
        stderrPath = "\(logDirectory)/\(name).err"
        _ = FileManager.default.createFile(atPath: stdoutPath, contents: nil)
        _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
        process.executableURL = executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = FileHandle(forWritingAtPath: stdoutPath)
        process.standardError = FileHandle(forWritingAtPath: stderrPath)
        try process.run()
    }

    /// What it has written to stderr so far. Read with read(2), not `String(contentsOfFile:)`: FoundationEssentials'
    /// file reading leaked its buffer when the file grew while it read (LeakSanitizer, in tests polling a running
    /// server's log).
    public var stderr: String {
        let descriptor = open(stderrPath, O_RDONLY | O_CLOEXEC)
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

    public func terminate() { process.terminate() }

    /// The exit status, or nil when it did not exit within `seconds` (it is then killed).
    public func waitForExit(seconds: Double) async -> Int32? {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        guard !process.isRunning else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return nil
        }
        process.waitUntilExit()  // lets Foundation finish with the child, so the Process can be freed
        return process.terminationStatus
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}
