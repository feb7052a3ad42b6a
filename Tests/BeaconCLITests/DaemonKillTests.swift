import BeaconTestSupport
import Foundation
import RegistryTestServer
import Testing

/// `beacond run` killed with SIGKILL fifty times at random moments (starting, replaying, committing,
/// posting, backing off) while the registry fails a third of its posts; then one run to the end. Every
/// sighting of the replay reaches the registry, each under the one id the capture gives it.
/// Not run in `.ci/run`'s sanitizer step (BEACOND_LOAD_TESTS=off): there its fifty sanitized `beacond` starts took both
/// cores of a slower machine for minutes, and the suites beside it waited out their deadlines (the ThreadSanitizer step
/// of defec63: the poster, the outbox upgrade and PostgreSQL's connections). It runs in the plain step on every commit.
@Suite(.disabled(if: LoadTests.areOff), .timeLimit(.minutes(20)))
struct DaemonKillTests {
    @Test func killedFiftyTimesTheDaemonStillDeliversEverySightingUnderOneID() async throws {
        let cafe = try await CafeRun.start("beacond-kill")
        try await withTeardown({ await cafe.stop() }) {
            // Posts fail, the bike list does not: a life whose first list request failed would replay without the list
            // until a retry brought it mid-replay, and report visits from that moment (other updates, other ids). That
            // is what a station does when its list comes late; it is not what this test is about.
            cafe.registry.setFailureRate(1.0 / 3, postsOnly: true)
            cafe.registry.setLatency(.milliseconds(10))  // keeps requests in flight when a kill comes
            let expected = try await CafeRun.expectedSightingIDs()

            var random = SystemRandomNumberGenerator()
            var killedWhileRunning = 0
            for life in 0..<50 {
                let posted = cafe.registry.posts.count
                let daemon = try cafe.launch(name: "life-\(life)")
                // Half the kills early (start-up, the replay, the first commits), half later (posting, backoff).
                let moment =
                    life % 2 == 0
                    ? Int.random(in: 20...300, using: &random) : Int.random(in: 300...1500, using: &random)
                // The second life is killed only once it has posted, whatever the machine's speed: on a loaded
                // machine every life died before its first post, and the test then proved little.
                if life == 1 {
                    let postedOrDone = await eventually(within: 60) {
                        cafe.registry.posts.count > posted || cafe.registry.sightings.count == expected.count
                    }
                    #expect(postedOrDone, "no life posted")
                }
                try await Task.sleep(for: .milliseconds(moment))
                if daemon.isRunning { killedWhileRunning += 1 }
                await daemon.kill()
                #expect(!daemon.isRunning, "the next life must not share the outbox with this one")
            }
            #expect(killedWhileRunning == 50)
            let deliveredBeforeTheLastRun = cafe.registry.sightings.count
            #expect(deliveredBeforeTheLastRun > 0, "no kill landed after a delivery; the test proves little")

            let last = try cafe.launch(["--exit-when-drained"], name: "last")
            #expect(await last.waitForExit(seconds: 120) == 0, "\(last.stderr)")

            let posts = cafe.registry.posts
            #expect(Set(cafe.registry.sightings.keys) == Set(expected), "every sighting of the replay, no other")
            #expect(posts.allSatisfy { $0.idempotencyKey == $0.body["sightingId"] })
            // One id per event: the same enter, update or exit never arrived under two ids.
            var idsByEvent: [String: Set<String>] = [:]
            for post in posts {
                idsByEvent[
                    "\(post.body["kind"]!) \(post.body["bikeId"]!) \(post.body["firstSeen"]!) \(post.body["lastSeen"]!)",
                    default: []
                ].insert(post.body["sightingId"]!)
            }
            #expect(
                idsByEvent.count == expected.count && idsByEvent.values.allSatisfy { $0.count == 1 },
                "\(idsByEvent.filter { $0.value.count > 1 })")
            // A sighting is posted again only when a kill fell between the registry's 2xx and the outbox's commit.
            #expect(posts.count - expected.count <= 50, "\(posts.count) posts for \(expected.count) sightings")
        }
    }
}
