import BeaconDaemon
import BeaconEngine
import BeaconOutbox
import BeaconRegistryClient
import BeaconTestSupport
import Foundation
import LockedValue
import Logging
import Testing

/// A replay gives the same sightings, ids included, however far the capture thread runs ahead of the engine. The
/// engine's clock tick used to take the capture's time while adverts still waited in the ring: a visit's reports
/// moved with how far the engine had got, so the exit of a 26-minute visit came once with two updates before it and
/// once with one (another sequence, another id). DaemonKillTests saw it under load; here the tick comes every
/// millisecond and the ring is small, so the capture is always ahead. The third run lets the capture push the whole
/// replay before the engine's loop begins, as it can when the service group starts the capture's task first: the
/// loop used to take its starting time from the capture then, and the early adverts were taken at the last one's
/// time (DaemonKillTests again, in CI's plain step of ca16a54).
@Suite(.timeLimit(.minutes(20))) struct ReplayDeterminismTests {
    static let capture = Fixtures.repositoryRoot.appendingPathComponent("Fixtures/cafe/cafe.pcap").path
    static let bikes = Fixtures.repositoryRoot.appendingPathComponent("Fixtures/cafe/bikes.json").path

    @Test func theEnginesTickNeverRunsAheadOfTheAdvertsItHasRead() async throws {
        let expected = try await BeacondRun([
            "replay", "--missing", Self.bikes, "--station-id", "e2e-station", "--format", "jsonl", Self.capture,
        ])
        .jsonLines.map { $0["sightingId"] as? String ?? "" }
        #expect(expected.count == 20)
        guard
            case .list(let set, _, _) = try await FileRegistry(bikes: Self.bikes, sightings: "/dev/null").fetchMissing(
                validators: nil, regions: [.findMyBike])
        else {
            Issue.record("no list")
            return
        }
        for run in 0..<3 {
            let directory = try TemporaryDirectory("replay-determinism")
            defer { directory.remove() }
            let capture = try ReplayCapture(paths: [Self.capture], speed: 0)
            let ring = AdvertRing(capacity: run == 2 ? 1 << 16 : 1_024)
            let ids = LockedValue([String]())
            let engine = EngineService(
                configuration: EngineConfiguration(stationID: "e2e-station"), location: (0, 0), ring: ring,
                capture: capture,
                mailbox: MissingSetMailbox(set), outbox: try Outbox(path: directory.file("outbox.sqlite")),
                nudgePoster: {},
                exitWhenDrained: false, onSighting: { sighting in ids.withLock { $0.append(sighting.id.description) } },
                logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }), tick: .milliseconds(1))
            capture.start(into: ring)
            if run == 2 {
                for _ in 0..<600 where capture.status.current.state != .finished {
                    try await Task.sleep(for: .milliseconds(10))
                }
                #expect(ring.statistics.pushed > 6_000 && ring.statistics.consumed == 0, "the replay ran ahead")
            }
            let running = Task { try await engine.run() }
            for _ in 0..<600
            where ids.withLock({ $0.count }) < expected.count || capture.status.current.state != .finished {
                try await Task.sleep(for: .milliseconds(50))
            }
            try await Task.sleep(for: .milliseconds(100))
            running.cancel()
            _ = await running.result
            // The same sightings; the order of two that fall due together may differ (an exit the tick finds
            // before the next advert's sweep would).
            let got = ids.withLock { $0 }
            #expect(
                got.count == expected.count && Set(got) == Set(expected),
                "run \(run): \(Set(got).symmetricDifference(expected))")
        }
    }
}
