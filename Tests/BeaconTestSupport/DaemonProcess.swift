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

    /// What it has written to stderr so far (GrowingFile: the file grows while it is read).
    public var stderr: String { GrowingFile.text(stderrPath) }

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
