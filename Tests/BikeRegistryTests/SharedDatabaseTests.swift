import BeaconTestSupport
import BikeRegistryCore
import BikeRegistryStore
import Foundation
import NIOHTTP1
import Testing

/// Two bike-registry servers on one PostgreSQL database, as a registry serving many cafés from more than one machine
/// runs: what one server is told, the other knows, and each message owed is delivered once, by one of them.
@Suite(.timeLimit(.minutes(20))) struct SharedDatabaseTests {
    @Test func twoServersShareStationsBikesAndDeliverEachMessageOnce() async throws {
        let directory = try TemporaryDirectory("bike-registry-shared")
        defer { directory.remove() }
        let receiver = NotificationReceiver()
        try await receiver.start()
        let first = try await RegistryHarness(.postgres, directory: directory.path, transport: .inProcess)
        let second = try await RegistryHarness(
            .postgres, directory: directory.path, sharing: first.testDatabase, transport: .inProcess)
        try await withTeardown({
            await second.stop()
            await first.stop()
            await receiver.stop()
        }) {
            // A station added through one is a station of both; a bike registered on one is missing on both.
            let key = try await first.database.addStation(name: "Ace", latitude: 51.5, longitude: -0.2)
            var bikes: [String] = []
            for minor in 1...4 {
                // Registered on one, reported missing through the other.
                let bike = try await first.register(minor: minor)
                let patch = #"{"missing":true,"notify":{"webhook":"\#(receiver.url("/hook"))"}}"#
                #expect(
                    try await second.request(.PATCH, "/owner/bikes/\(bike.id)", bearer: bike.token, body: patch).status
                        == 200)
                bikes.append(bike.id)
            }
            let listed = try await second.request(.GET, "/bikes?missing=true", bearer: key)
            #expect((listed.json as? [[String: Any]])?.count == 4)
            #expect(
                try await first.request(
                    .POST, "/owner/bikes",
                    body:
                        #"{"uuid":"21EECF71-D5C7-4A00-9B90-27C94B5146EA","major":1,"minor":1,"make":"a","model":"b","colour":"c"}"#
                ).status == 409)

            // Forty visits posted to both at once, each enter twice (once to each server): 40 messages, once each.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for visit in 0..<40 {
                    let firstSeen = ISO8601DateFormatter().string(
                        from: Date(timeIntervalSince1970: 1_717_228_800 + Double(visit) * 60))
                    let sighting = RegistryClient.sighting(bikeId: bikes[visit % bikes.count], firstSeen: firstSeen)
                    for server in [first, second] {
                        group.addTask {
                            let status = try await server.post(sighting, key: key).status
                            #expect((200..<300).contains(status))
                        }
                    }
                }
                try await group.waitForAll()
            }
            _ = await receiver.waitFor(40, seconds: 20)
            // Every message written as delivered, then both servers stopped with their deliveries ended: a second
            // delivery of any message would have reached the receiver before either.
            let counts = try await first.settled()
            #expect(counts.owed == 0 && counts.delivered == 40 && counts.abandoned == 0, "\(counts)")
            await first.stopServing()
            await second.stopServing()
            let ids = receiver.received.map { $0.headers["webhook-id"] ?? "" }
            #expect(ids.count == 40 && Set(ids).count == 40, "\(ids.count) deliveries of \(Set(ids).count) messages")
        }
    }

    /// Two servers' batches holding the same sightings in crossed orders (a station posts to both, or retries on
    /// the other): each insert waits for a row the other holds. PostgreSQL ends such a deadlock by rolling one
    /// statement back, which the stations once saw as a 503 (CI, under the whole suite's load); every post must
    /// be answered, each sighting recorded once and its message owed once.
    /// Enough to meet the deadlock in most runs without the mends (7 of 11 here), and little enough not to take
    /// the test process's threads from the suites beside it: 20 rounds of 60 took 120 s under ThreadSanitizer, and
    /// other suites' PostgreSQL requests ran out of their 5 s meanwhile.
    static let rounds = 6
    static let perRound = 40

    @Test func crossedBatchesOnTwoServersAreAllRecordedOnce() async throws {
        let directory = try TemporaryDirectory("bike-registry-shared")
        defer { directory.remove() }
        let database = try await TestDatabase.make(.postgres, in: directory.path)
        let stores = [try await database.open(), try await database.open()]
        try await withTeardown({
            for store in stores { await store.close() }
            await database.drop()
        }) {
            _ = try await stores[0].addStation(name: "Ace", latitude: 51.5, longitude: -0.2)
            let station = try #require(try await stores[0].stations().first)
            guard
                case .registered(let registration) = try await stores[0].register(
                    NewBike(
                        uuid: "21EECF71-D5C7-4A00-9B90-27C94B5146EA", major: 1, minor: 7, make: "a", model: "b",
                        colour: "c"))
            else {
                Issue.record("minor 7 taken")
                return
            }
            _ = try await stores[1].update(
                id: registration.bike.id, ownerToken: registration.ownerToken,
                BikeChange(missing: true, targets: [.webhook: "http://127.0.0.1:9/hook"]))

            // Rounds of sixty, each round posted to one server in order and to the other in reverse at once, so their
            // batches meet in the middle.
            var outcomes: [RecordOutcome] = []
            for round in 0..<Self.rounds {
                let sightings = (0..<Self.perRound).map { visit in
                    let seen = Date(timeIntervalSince1970: 1_717_228_800 + Double(round * Self.perRound + visit) * 60)
                    return SightingReport(
                        sightingId: UUID().uuidString.lowercased(), bikeId: registration.bike.id, kind: .enter,
                        date: seen, firstSeen: seen, lastSeen: seen, proximity: "near", rssi: -60, count: 1)
                }
                outcomes += try await withThrowingTaskGroup(of: RecordOutcome.self) { group in
                    for (store, order) in [(stores[0], sightings), (stores[1], sightings.reversed())] {
                        for sighting in order {
                            group.addTask { try await store.record(sighting, from: station) }
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
            }
            #expect(outcomes.count == 2 * Self.rounds * Self.perRound)
            #expect(outcomes.filter { $0 == .repeated }.count == Self.rounds * Self.perRound)
            #expect(outcomes.filter { $0 == .recorded(notifications: 1) }.count == Self.rounds * Self.perRound)
            let counts = try await stores[0].notificationCounts()
            #expect(counts.owed == Self.rounds * Self.perRound, "\(counts)")
        }
    }

    @Test func serversStartingTogetherOnANewDatabaseMigrateItOnce() async throws {
        let directory = try TemporaryDirectory("bike-registry-shared")
        defer { directory.remove() }
        let database = try await TestDatabase.make(.postgres, in: directory.path)
        try await withTeardown({ await database.drop() }) {
            let stores = try await withThrowingTaskGroup(of: (any RegistryStore).self) { group in
                for _ in 0..<4 { group.addTask { try await database.open() } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(stores.count == 4)
            _ = try await stores[0].addStation(name: "Ace", latitude: 1, longitude: 2)
            #expect(try await stores[3].stations().map(\.name) == ["Ace"])
            for store in stores { await store.close() }
        }
    }
}
