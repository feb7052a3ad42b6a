import BeaconTestSupport
import BikeRegistryCore
import BikeRegistryStore
import Foundation
import NIOConcurrencyHelpers
import NIOHTTP1
import Testing

/// bike-registry killed with SIGKILL again and again while a station posts and the worker delivers: every sighting
/// answered 2xx is stored, every notification it owed is delivered in the end, and one delivered twice carries the
/// same webhook-id.
/// Not run in `.ci/run`'s sanitizer step (BEACOND_LOAD_TESTS=off): there its forty sanitized `bike-registry` starts and
/// their databases took both cores of a slower machine for minutes, and the suites beside it waited out their deadlines
/// (the ThreadSanitizer step of defec63: the poster, the outbox upgrade and PostgreSQL's connections). It runs in the
/// plain step on every commit.
@Suite(.disabled(if: LoadTests.areOff), .timeLimit(.minutes(20)))
struct CrashTests {
    @Test(arguments: StoreKind.allCases) func killedTwentyTimesItLosesNoAcknowledgedSightingAndNoNotification(
        store kind: StoreKind
    ) async throws {
        let directory = try TemporaryDirectory("bike-registry-crash")
        defer { directory.remove() }
        let testDatabase = try await TestDatabase.make(kind, in: directory.path)
        try await withTeardown({ await testDatabase.drop() }) {
            let database = testDatabase.location
            let added = try await BeacondRun.run(
                executable: BeacondRun.registryBinary.path,
                ["station", "add", "Ace", "--latitude", "51.5", "--longitude=-0.1", "--json", "--database", database])
            let key = try #require(
                (try JSONSerialization.jsonObject(with: Data(added.stdout.utf8)) as? [String: String])?["key"])
            let receiver = NotificationReceiver()
            try await receiver.start()
            try await withTeardown({ await receiver.stop() }) {
                let port = try LoopbackPort.free()
                let client = RegistryClient(baseURL: "http://127.0.0.1:\(port)")
                var run = 0
                func start() async throws -> DaemonProcess {
                    run += 1
                    let server = try DaemonProcess(
                        [
                            "serve", "--listen", "127.0.0.1:\(port)", "--database", database,
                            "--allow-private-webhooks",
                            "--registration", "open",
                            "--requests-per-minute", "1000000",
                        ],
                        executable: BeacondRun.registryBinary, logDirectory: directory.path, name: "registry-\(run)")
                    for _ in 0..<200 where !server.stderr.contains("bike-registry listening") {
                        try await Task.sleep(for: .milliseconds(25))
                    }
                    return server
                }

                var server = try await start()
                var bikes: [String] = []
                for minor in 1...5 {
                    bikes.append(try await client.registerMissing(minor: minor, webhook: receiver.url("/hook")).id)
                }

                // The station: one new visit after another, each an enter, until told to stop.
                let acknowledged = LockedList()
                let bikeIDs = bikes
                let posting = Task {
                    var visit = 0
                    while !Task.isCancelled {
                        visit += 1
                        let firstSeen = ISO8601DateFormatter().string(
                            from: Date(timeIntervalSince1970: 1_717_228_800 + Double(visit) * 60))
                        let sighting = RegistryClient.sighting(
                            bikeId: bikeIDs[visit % bikeIDs.count], firstSeen: firstSeen)
                        if let answer = try? await client.post(sighting, key: key), (200..<300).contains(answer.status)
                        {
                            acknowledged.append(sighting.id)
                        } else {
                            try? await Task.sleep(for: .milliseconds(20))
                        }
                    }
                }
                for life in 1...20 {
                    // Each life of the server first takes two sightings more (a slow build, such as ThreadSanitizer's, on
                    // PostgreSQL, got too few through when lives were timed alone), then dies at a random moment after.
                    for _ in 0..<1_200 where acknowledged.items.count < 2 * life {
                        try await Task.sleep(for: .milliseconds(25))
                    }
                    try await Task.sleep(for: .milliseconds(Int.random(in: 0...450)))
                    server.process.send(SIGKILL)
                    _ = await server.waitForExit(seconds: 10)
                    server = try await start()
                }
                try await Task.sleep(for: .milliseconds(500))
                posting.cancel()
                _ = await posting.value

                // Every acknowledged sighting is in the database.
                let store = try await testDatabase.open()
                try await withTeardown({ await store.close() }) {
                    var stored = Set<String>()
                    for bike in bikes {
                        stored.formUnion(try await store.sightings(bikeId: bike, limit: 100_000).map(\.visitId))
                    }
                    let acknowledgedIDs = acknowledged.items
                    #expect(
                        acknowledgedIDs.count >= 40,
                        "the station got \(acknowledgedIDs.count) sightings through; too few to mean much")
                    var missingSightings = 0
                    for id in acknowledgedIDs where try await !store.hasSighting(id) { missingSightings += 1 }
                    #expect(missingSightings == 0, "\(missingSightings) sightings answered 2xx were lost")

                    // Every notification owed is delivered, with one webhook-id per message however often it came. On PostgreSQL
                    // a message a killed server was delivering is due again when its lease ends (the delivery's deadline and
                    // 15 s: 30 s), so the wait is longer than that.
                    var counts = try await store.notificationCounts()
                    for _ in 0..<600 where counts.owed > 0 {
                        try await Task.sleep(for: .milliseconds(100))
                        counts = try await store.notificationCounts()
                    }
                    #expect(counts.owed == 0 && counts.abandoned == 0, "\(counts)")
                    let received = receiver.received
                    var idsByVisit: [String: Set<String>] = [:]
                    for message in received {
                        let body = try #require(
                            try JSONSerialization.jsonObject(with: Data(message.body.utf8)) as? [String: Any])
                        let visit = (body["data"] as? [String: Any])?["visitId"] as? String ?? ""
                        idsByVisit["\(visit) \(body["type"] ?? "")", default: []].insert(
                            message.headers["webhook-id"] ?? "")
                    }
                    #expect(idsByVisit.values.allSatisfy { $0.count == 1 }, "a message came under two webhook-ids")
                    #expect(idsByVisit.count == counts.delivered, "each delivered message reached the receiver")
                    #expect(
                        stored.count >= acknowledgedIDs.count && idsByVisit.count == stored.count,
                        "one seen per stored visit: \(idsByVisit.count) of \(stored.count)")
                    server.terminate()
                    #expect(await server.waitForExit(seconds: 10) == 0)
                }
            }
        }
    }
}

/// A list appended to from a task and read at the end.
final class LockedList: Sendable {
    private let list = NIOLockedValueBox([String]())
    func append(_ item: String) { list.withLockedValue { $0.append(item) } }
    var items: [String] { list.withLockedValue { $0 } }
}
