public import Foundation

#if canImport(Glibc)
import Glibc
#endif

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
        let output = FileHandle(forWritingAtPath: stdoutPath)
        let errors = FileHandle(forWritingAtPath: stderrPath)
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        // The child has its own copies; these would live as long as the `Process` (ProcessExit.swift says how long).
        try? output?.close()
        try? errors?.close()
    }

    /// What it has written to stderr so far (GrowingFile: the file grows while it is read).
    public var stderr: String { GrowingFile.text(stderrPath) }

    /// SIGTERM, as systemd's stop would send it, through `send`: only while the id is still the child's.
    public func terminate() { process.send(SIGTERM) }

    /// Whether it still runs, by the kernel's word (`ProcessExit.swift` says why not Foundation's).
    public var isRunning: Bool { !process.hasExited }

    /// The exit status, or nil when it did not exit within `seconds` (it is then killed).
    public func waitForExit(seconds: Double) async -> Int32? {
        if let status = await process.exited(within: seconds) { return status }
        process.send(SIGKILL)
        _ = await process.exited(within: 30)
        return nil
    }

    /// Kills it (SIGKILL, as a power cut would) and waits until it has ended, up to `seconds`.
    public func kill(within seconds: Double = 30) async {
        process.send(SIGKILL)
        _ = await process.exited(within: seconds)
    }

    deinit {
        // Killed, not waited for: a deinit cannot wait without blocking its thread. Foundation reaps it. One that
        // ended and was reaped already lets go of its run-loop source (`waitUntilExit` returns at once).
        if process.isRunning { process.send(SIGKILL) } else { process.waitUntilExit() }
    }
}
