import BeaconTestSupport
import BikeRegistryCore
import BikeRegistryStore
import Foundation
import Testing

/// How the store hands messages to the worker's lanes: each message to one lane, a target a lane holds passed over,
/// and on a shared PostgreSQL database two servers taking at once never take the same message (its lease).
@Suite(.timeLimit(.minutes(20))) struct DeliveryLaneTests {
    static let region = "21EECF71-D5C7-4A00-9B90-27C94B5146EA"

    /// `count` missing bikes, each owed one message; bike i's webhook is `target(i)`.
    static func owe(_ count: Int, in registry: any RegistryStore, target: (Int) -> String) async throws {
        _ = try await registry.addStation(name: "Ace", latitude: 51.5, longitude: -0.2)
        let station = try #require(try await registry.stations().first)
        for minor in 0..<count {
            guard
                case .registered(let registration) = try await registry.register(
                    NewBike(uuid: region, major: 1, minor: minor, make: "a", model: "b", colour: "c"))
            else { throw HarnessError("minor \(minor) taken") }
            let bike = registration.bike
            _ = try await registry.update(
                id: bike.id, ownerToken: registration.ownerToken,
                BikeChange(missing: true, targets: [.webhook: target(minor)]))
            let seen = Date(timeIntervalSince1970: 1_717_228_800)
            let sighting = SightingReport(
                sightingId: UUID().uuidString.lowercased(), bikeId: bike.id, kind: .enter, date: seen, firstSeen: seen,
                lastSeen: seen, proximity: "near", rssi: -60, count: 1)
            #expect(try await registry.record(sighting, from: station) == .recorded(notifications: 1))
        }
    }

    /// Messages to busy targets are passed over, by `take` and by `nextNotificationDue` alike; the oldest of the
    /// others is taken.
    @Test(arguments: StoreKind.allCases) func aBusyTargetIsPassedOver(store: StoreKind) async throws {
        let directory = try TemporaryDirectory("bike-registry-lanes")
        defer { directory.remove() }
        let database = try await TestDatabase.make(store, in: directory.path)
        let registry = try await database.open()
        try await withTeardown({
            await registry.close()
            await database.drop()
        }) {
            // Four messages: three to one endpoint, one to another.
            try await Self.owe(4, in: registry) { $0 < 3 ? "http://127.0.0.1:9/slow" : "http://127.0.0.1:9/other" }
            let now = Date()
            let first = try #require(
                try await registry.takeDueNotification(now: now, busyTargets: [], heldUntil: now.addingTimeInterval(30))
            )
            #expect(first.target == "http://127.0.0.1:9/slow")
            let second = try #require(
                try await registry.takeDueNotification(
                    now: now, busyTargets: [first.target], heldUntil: now.addingTimeInterval(30)))
            #expect(second.target == "http://127.0.0.1:9/other", "the slow endpoint's other messages wait for its lane")
            #expect(
                try await registry.takeDueNotification(
                    now: now, busyTargets: [first.target, second.target], heldUntil: now.addingTimeInterval(30)) == nil)
            #expect(try await registry.nextNotificationDue(busyTargets: [first.target, second.target]) == nil)
            #expect(try await registry.nextNotificationDue(busyTargets: [second.target]) != nil)

            try await registry.recordAttempt(.delivered, of: first, now: Date())
            let counts = try await registry.notificationCounts()
            #expect(counts.delivered == 1 && counts.owed == 3)
            if store == .postgres {
                // Held by its lease: not taken again before it ends, though it was not delivered.
                let third = try await registry.takeDueNotification(
                    now: Date(), busyTargets: [], heldUntil: Date().addingTimeInterval(30))
                #expect(third != nil && third?.id != second.id)
            }
        }
    }

    /// Two servers of one PostgreSQL database, each taking as fast as it can: every message is taken once.
    @Test func twoServersTakingAtOnceNeverTakeTheSameMessage() async throws {
        let directory = try TemporaryDirectory("bike-registry-lanes")
        defer { directory.remove() }
        let database = try await TestDatabase.make(.postgres, in: directory.path)
        let one = try await database.open()
        let two = try await database.open()
        try await withTeardown({
            await one.close()
            await two.close()
            await database.drop()
        }) {
            let messages = 120
            try await Self.owe(messages, in: one) { "http://127.0.0.1:9/hook/\($0)" }
            let taken = Collected<String>()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for server in [one, two] {
                    for _ in 0..<4 {
                        group.addTask {
                            while let message = try await server.takeDueNotification(
                                now: Date(), busyTargets: [], heldUntil: Date().addingTimeInterval(60))
                            {
                                taken.add(message.id)
                                try await server.recordAttempt(.delivered, of: message, now: Date())
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            let counted = Dictionary(taken.all.map { ($0, 1) }, uniquingKeysWith: +)
            #expect(counted.count == messages && counted.values.allSatisfy { $0 == 1 })
            let counts = try await one.notificationCounts()
            #expect(counts.owed == 0 && counts.delivered == messages)
        }
    }
}
