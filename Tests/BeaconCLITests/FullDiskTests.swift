import BeaconControl
import BeaconDaemon
import BeaconTestSupport
import Foundation
import RegistryTestServer
import Testing

/// The state directory's file system fills up (an SD card full of logs): detection goes on, `status` says the
/// outbox cannot take sightings, and once there is room again everything, before and after, is delivered.
@Suite(.timeLimit(.minutes(20))) struct FullDiskTests {
    @Test(.enabled(if: getuid() == 0, "mounting a small tmpfs needs root (CI runs as root)"))
    func aFullStateDirectoryDelaysSightingsButLosesNone() async throws {
        let cafe = try await CafeRun.start("beacond-full")
        try await withTeardown({ await cafe.stop() }) {
            let expected = try await CafeRun.expectedSightingIDs()
            let mount = try SmallFileSystem(at: cafe.state, megabytes: 4)
            defer { mount.unmount() }

            // 120x: the 41-minute capture takes about 20 s, its sightings spread over it.
            let daemon = try cafe.launch(["--speed", "120", "--exit-when-drained"], name: "full")
            let delivering = await cafe.waitForStatus(seconds: 30) { $0.outbox.delivered >= 2 }
            try #require(delivering != nil, "no sighting delivered within 30 s:\n\(daemon.stderr)")

            try mount.fill()
            let stuck = await cafe.waitForStatus(seconds: 30) { $0.outbox.uncommitted > 0 }
            let report = try #require(stuck, "no sighting waiting for the outbox within 30 s:\n\(daemon.stderr)")
            #expect(report.outbox.lastError?.contains("full") == true, "\(String(describing: report.outbox.lastError))")
            #expect(
                !report.healthy && report.problems.contains { $0.contains("outbox cannot take sightings") },
                "\(report.problems)")
            // Detection goes on: adverts keep being read and sightings keep being made while the disk is full (until the
            // capture ends, which the disk does not hold up either).
            let later = await cafe.waitForStatus(seconds: 30) {
                $0.capture.state == "finished"
                    || ($0.capture.adverts > report.capture.adverts
                        && $0.outbox.uncommitted > report.outbox.uncommitted)
            }
            #expect(later != nil, "no advert read and no sighting made while the disk was full:\n\(daemon.stderr)")

            mount.makeRoom()
            #expect(
                await daemon.waitForExit(seconds: 60) == 0,
                "the backlog did not drain once there was room:\n\(daemon.stderr)")
            #expect(daemon.stderr.contains("outbox cannot take sightings; keeping them in memory"))
            let received = cafe.registry.sightings
            #expect(
                Set(received.keys) == Set(expected),
                "every sighting, committed before or during the full disk, delivered")
        }
    }
}

/// A tmpfs of a few megabytes mounted over a directory, and a file that fills it.
struct SmallFileSystem {
    let path: String
    var filler: String { path + "/filler" }

    init(at path: String, megabytes: Int) throws {
        self.path = path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(megabytes)m,mode=0750", "tmpfs", path])
    }

    /// Writes zeros until the file system refuses more.
    func fill() throws {
        let descriptor = open(filler, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw FixtureError("cannot create \(filler): errno \(errno)") }
        defer { close(descriptor) }
        let block = [UInt8](repeating: 0, count: 4096)
        while block.withUnsafeBytes({ write(descriptor, $0.baseAddress, $0.count) }) > 0 {}
        guard errno == ENOSPC else { throw FixtureError("filling \(path) stopped with errno \(errno), not ENOSPC") }
    }

    func makeRoom() { unlink(filler) }

    func unmount() { try? Self.run("/bin/umount", ["-l", path]) }

    static func run(_ tool: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        try process.run()
        guard process.waitForExit() == 0 else {
            throw FixtureError("\(tool) \(arguments.joined(separator: " ")) failed")
        }
    }
}
