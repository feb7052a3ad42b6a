import BeaconTestSupport
import Foundation

/// A dbus-daemon of the test's own (session configuration, socket in a temporary directory): the real
/// broker, without touching the machine's system bus.
final class PrivateBus {
    let address: String
    private let process = Process()
    private let directory: String

    init() throws {
        directory =
            FileManager.default.temporaryDirectory.appendingPathComponent("beacond-bus-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
        process.arguments = ["--session", "--nofork", "--print-address=1", "--address=unix:dir=\(directory)"]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = out.fileHandleForReading.availableData
            guard !chunk.isEmpty else { break }
            line += chunk
        }
        address = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    deinit {
        // SIGKILL: the daemon holds no state worth a clean exit (and SIGTERM left it running).
        process.send(SIGKILL)
        process.waitForExit()
        try? FileManager.default.removeItem(atPath: directory)
    }
}
