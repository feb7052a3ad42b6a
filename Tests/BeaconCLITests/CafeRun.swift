import BeaconControl
import BeaconDaemon
import BeaconTestSupport
import Foundation
import RegistryTestServer
import Testing

/// `beacond run` on the café capture against a registry on loopback, for the tests that hurt it: the
/// arguments, a start in the background, its status, and the sightings the capture must cause.
struct CafeRun {
    static let capture = DaemonEndToEndTests.capture
    static let bikes = DaemonEndToEndTests.bikes

    let directory: TemporaryDirectory
    let registry: RegistryServer
    var state: String { directory.file("state") }
    var socket: String { directory.file("control.sock") }

    /// A registry serving the café's bikes, and a directory for the state, the socket and the logs.
    static func start(_ label: String) async throws -> CafeRun {
        let registry = RegistryServer()
        try await registry.start()
        registry.setBikes(try String(contentsOfFile: bikes, encoding: .utf8))
        return CafeRun(directory: try TemporaryDirectory(label), registry: registry)
    }

    /// For a test's `withTeardown`: the registry stops, then the directory goes.
    func stop() async {
        await registry.stop()
        directory.remove()
    }

    /// `beacond run` replaying the café capture as fast as it goes (the same sightings every time, ids included).
    func arguments(capture: String = CafeRun.capture) throws -> [String] {
        [
            "run", "--replay", capture, "--speed", "0", "--registry", registry.baseURL, "--state-dir", state,
            "--control-socket", socket, "--station-id", "e2e-station", "--config",
            try DaemonEndToEndTests.emptyConfig(in: directory),
        ]
    }

    func launch(_ extra: [String] = [], capture: String = CafeRun.capture, name: String) throws -> DaemonProcess {
        try DaemonProcess(try arguments(capture: capture) + extra, logDirectory: directory.path, name: name)
    }

    func status() -> StatusReport? { try? DaemonEndToEndTests.status(socket: socket) }

    /// Polls `status` until `condition` holds; the last report, or nil when the time ran out.
    func waitForStatus(seconds: Double, _ condition: (StatusReport) -> Bool) async -> StatusReport? {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if let report = status(), condition(report) { return report }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return nil
    }

    /// The ids of the capture's sightings in the order the engine makes them, from `beacond replay --missing`.
    static func expectedSightingIDs() async throws -> [String] {
        let run = try await BeacondRun([
            "replay", "--missing", bikes, "--station-id", "e2e-station", "--format", "jsonl", capture,
        ])
        return try run.jsonLines.map { $0["sightingId"] as! String }
    }

    /// The same sightings' kinds and bikes, in that order.
    static func expectedSightings() async throws -> [(kind: String, bike: String)] {
        let run = try await BeacondRun([
            "replay", "--missing", bikes, "--station-id", "e2e-station", "--format", "jsonl", capture,
        ])
        return try run.jsonLines.map { ($0["kind"] as! String, $0["bikeId"] as! String) }
    }
}
