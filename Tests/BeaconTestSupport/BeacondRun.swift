public import Foundation

/// Runs the built `beacond` binary as a user would and keeps what it printed and how it exited.
public struct BeacondRun: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String

    /// The test bundle sits beside the products in the build directory.
    public static let binary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        .deletingLastPathComponent().appendingPathComponent("beacond")
    /// bike-registry, built beside it.
    public static let registryBinary = binary.deletingLastPathComponent().appendingPathComponent("bike-registry")

    /// Waits for the run on a thread of its own. Swift Testing runs tests on the cooperative pool, which has one
    /// thread per core: a run waited for on a pool thread holds that thread for its whole length, and two of them on
    /// CI's two cores starved every other test (a poster under test saw no time at all for seconds).
    public init(_ arguments: [String]) async throws {
        self = try await Self.run(executable: Self.binary.path, arguments)
    }

    /// Another program (`setpriv`, say, to run beacond as another user), waited for the same way, with `environment`
    /// added to the test's own.
    public static func run(executable: String, _ arguments: [String], environment: [String: String] = [:])
        async throws -> BeacondRun
    {
        try await onOwnThread {
            try BeacondRun(blocking: arguments, executable: executable, environment: environment)
        }
    }

    private init(blocking arguments: [String], executable: String, environment: [String: String] = [:]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // stderr carries only a short summary, so reading stdout to the end first cannot stall the child.
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        // Closed here rather than with the `Process`, which a child Foundation reaps late keeps (ProcessExit.swift).
        try? out.fileHandleForReading.close()
        try? err.fileHandleForReading.close()
        status = process.waitForExit()
        self.stdout = String(decoding: stdout, as: UTF8.self)
        self.stderr = String(decoding: stderr, as: UTF8.self)
    }

    /// stdout as one parsed JSON object per line.
    public var jsonLines: [[String: Any]] {
        get throws {
            try stdout.split(separator: "\n").map { line in
                guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                    throw FixtureError("not a JSON object: \(line)")
                }
                return object
            }
        }
    }
}
