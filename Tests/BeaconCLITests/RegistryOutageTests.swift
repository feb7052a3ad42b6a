import BeaconDaemon
import BeaconTestSupport
import Foundation
import RegistryTestServer
import Testing

/// The registry down for the whole replay (every request a 500), then back: the daemon works from its cache,
/// keeps every sighting, retries with growing gaps rather than a storm, and drains the backlog in order.
@Suite struct RegistryOutageTests {
    @Test func aBacklogFromAWholeReplayDrainsInOrderWithBackoff() async throws {
        let cafe = try await CafeRun.start("beacond-outage")
        defer { cafe.stop() }
        let expected = try await CafeRun.expectedSightingIDs()

        // Yesterday the registry answered, so the bike list is cached.
        let quiet = Fixtures.repositoryRoot.appendingPathComponent("Fixtures/edge/h4.btsnoop").path
        let yesterday = try cafe.launch(["--exit-when-drained"], capture: quiet, name: "yesterday")
        #expect(await yesterday.waitForExit(seconds: 30) == 0, "\(yesterday.stderr)")
        #expect(FileManager.default.fileExists(atPath: cafe.state + "/missing-bikes.json"))

        cafe.registry.setFailureRate(1)
        let daemon = try cafe.launch(["--exit-when-drained"], name: "outage")
        let backlog = await cafe.waitForStatus(seconds: 30) {
            $0.capture.state == "finished" && $0.outbox.depth == expected.count
        }
        try #require(backlog != nil, "the whole replay did not end up in the outbox:\n\(daemon.stderr)")
        try await Task.sleep(for: .seconds(10))
        // The daemon's count first: an attempt the registry has seen may not have had its answer counted yet.
        let retries = try #require(cafe.status()).outbox.retries
        let attempts = cafe.registry.requests.filter { $0.path == "/sightings" }.count
        // Backoff from 1-2 s, doubling: at most 5 attempts in these 10 s, where a loop without backoff would have
        // made thousands. At least 2: it does retry (3 on a quiet machine; CI once saw only 2, under ThreadSanitizer
        // with the whole suite on two cores).
        #expect((2...5).contains(attempts), "\(attempts) attempts in 10 s of outage")
        #expect(cafe.registry.posts.isEmpty)
        #expect(
            (attempts - 1...attempts).contains(retries), "status counts \(retries) retries for \(attempts) attempts")

        cafe.registry.setFailureRate(0)
        let backAt = Date()
        #expect(await daemon.waitForExit(seconds: 60) == 0, "\(daemon.stderr)")
        let drainedAfter = Date().timeIntervalSince(backAt)
        // In order: the registry got the backlog exactly as the engine made it, the held-up first sighting first.
        #expect(cafe.registry.posts.map { $0.body["sightingId"]! } == expected)
        // The next attempt comes at most one backoff window (16 s by now) after the registry is back.
        #expect(drainedAfter < 20, "the backlog waited \(drainedAfter) s after the registry came back")
    }
}
