import BeaconControl
import BeaconDaemon
import BeaconDelivery
import BeaconTestSupport
import DaemonSupport
import Foundation
import RegistryTestServer
import Testing

/// The registry down for the whole replay (every request a 500), then back: the daemon works from its cache,
/// keeps every sighting, retries with growing gaps rather than a storm, and drains the backlog in order.
@Suite(.timeLimit(.minutes(20))) struct RegistryOutageTests {
    @Test func aBacklogFromAWholeReplayDrainsInOrderWithBackoff() async throws {
        let cafe = try await CafeRun.start("beacond-outage")
        try await withTeardown({ await cafe.stop() }) {
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
            // Two failed attempts (or more, on a slow machine) show a gap; the registry comes back after them.
            let start = ContinuousClock.now
            while cafe.registry.sightingArrivals.count < 2 && ContinuousClock.now - start < .seconds(30) {
                try await Task.sleep(for: .milliseconds(10))
            }
            // The daemon's count first: an attempt the registry has seen may not have had its answer counted yet.
            let retries = try #require(cafe.status()).outbox.retries
            let failed = cafe.registry.sightingArrivals.count
            try #require(failed >= 2, "fewer than two attempts in 30 s of outage:\n\(daemon.stderr)")
            #expect(cafe.registry.posts.isEmpty)
            #expect((failed - 1...failed).contains(retries), "status counts \(retries) retries for \(failed) attempts")
            cafe.registry.setFailureRate(0)

            #expect(await daemon.waitForExit(seconds: 60) == 0, "\(daemon.stderr)")
            // In order: the registry got the backlog exactly as the engine made it, the held-up first sighting first.
            #expect(cafe.registry.posts.map { $0.body["sightingId"]! } == expected)
            // The backoff (base 2 s, doubling): attempt n + 1 comes between half and all of 2ⁿ⁺¹ s after attempt n,
            // up to the first that the registry took, where a loop without backoff would have made thousands. The
            // upper bound allows ten seconds for a loaded machine to get the next request out (five were passed in a
            // stall of the disk that held every process for 7 s, in a whole plain run of 8cfab03).
            let arrivals = cafe.registry.sightingArrivals
            for attempt in 0..<failed {
                let window = Duration.seconds(2) * (1 << attempt)
                let gap = arrivals[attempt + 1] - arrivals[attempt]
                #expect(
                    gap >= window / 2 && gap <= window + .seconds(10),
                    "attempt \(attempt + 2) came \(gap) after attempt \(attempt + 1), not half to all of \(window)")
            }
        }
    }
}
