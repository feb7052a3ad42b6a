import BeaconOutbox
import BeaconTestSupport
import Foundation
import RegistryTestServer
import Testing

/// A process queueing and posting sightings, killed with SIGKILL at random moments and restarted: in the end
/// every sighting is delivered, under one id each, and the outbox is empty.
/// Not run in `.ci/run`'s sanitizer step (BEACOND_LOAD_TESTS=off): there its twenty-five sanitized children killed and
/// started again took both cores of a slower machine for minutes, and the suites beside it waited out their deadlines
/// (the ThreadSanitizer step of defec63: the poster, the outbox upgrade and PostgreSQL's connections). It runs in the
/// plain step on every commit.
@Suite(.disabled(if: LoadTests.areOff), .timeLimit(.minutes(20)))
struct OutboxCrashTests {
    static let child = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        .deletingLastPathComponent().appendingPathComponent("OutboxCrashChild")

    func launch(_ outbox: String, _ server: RegistryServer, count: Int) throws -> Process {
        let process = Process()
        process.executableURL = Self.child
        process.arguments = [outbox, server.baseURL, String(count)]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    @Test func killedTwentyFiveTimesItStillDeliversEverySightingOnce() async throws {
        let server = RegistryServer()
        try await server.start()
        try await withTeardown({ await server.stop() }) {
            server.setLatency(.milliseconds(20))  // keeps deliveries in flight when the kill comes
            server.setFailureRate(0.2)
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let outbox = directory.file("outbox.sqlite")
            let count = 150  // 300 sightings: 150 enters, 150 exits (about 7 s of deliveries at 20 ms each)
            var generator = SystemRandomNumberGenerator()
            var killedMidway = 0
            for _ in 0..<25 {
                let process = try launch(outbox, server, count: count)
                try await Task.sleep(for: .milliseconds(Int.random(in: 50...400, using: &generator)))
                if !process.hasExited { killedMidway += 1 }
                process.send(SIGKILL)
                #expect(await process.exited(within: 30) != nil, "the next child must not share the outbox")
            }
            let last = try launch(outbox, server, count: count)
            #expect(await last.exited(within: 120) == 0)
            #expect(killedMidway >= 20, "kills that landed while the child was working: \(killedMidway)")

            let received = server.sightings
            #expect(received.count == 2 * count, "every sighting delivered")
            // One id per event: no (bike, kind) pair arrived under two ids.
            var idsByEvent: [String: Set<String>] = [:]
            for post in server.posts {
                idsByEvent["\(post.body["bikeId"]!) \(post.body["kind"]!)", default: []].insert(
                    post.body["sightingId"]!)
            }
            #expect(idsByEvent.count == 2 * count && idsByEvent.values.allSatisfy { $0.count == 1 })
            #expect(try Outbox(path: outbox).statistics().depth == 0)
        }
    }
}
