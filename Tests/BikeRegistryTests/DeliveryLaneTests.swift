import BeaconTestSupport
import BikeRegistryStore
import Foundation
import Synchronization
import Testing

/// The notification worker's lanes, on the store alone: eight lanes take due messages side by side, as the worker
/// runs them, and each message is delivered once. A lane reads the due list before it holds a message, so another lane
/// may deliver that message and let go of it in between; the store must see that, not deliver it again (the sanitizer
/// build, slow enough to widen that gap, told an owner twice).
@Suite struct DeliveryLaneTests {
    @Test(arguments: StoreKind.allCases) func eightLanesDeliverEachMessageOnce(store: StoreKind) async throws {
        let directory = try TemporaryDirectory("bike-registry-lanes")
        defer { directory.remove() }
        let database = try await TestDatabase.make(store, in: directory.path)
        let registry = try await database.open()
        defer {
            Task {
                await registry.close()
                await database.drop()
            }
        }

        _ = try await registry.addStation(name: "Ace", latitude: 51.5, longitude: -0.2)
        let station = try #require(try await registry.stations().first)
        let messages = 120
        for minor in 0..<messages {
            guard
                case .registered(let registration) = try await registry.register(
                    NewBike(
                        uuid: "21EECF71-D5C7-4A00-9B90-27C94B5146EA", major: 1, minor: minor, make: "a", model: "b",
                        colour: "c"))
            else {
                Issue.record("minor \(minor) taken")
                return
            }
            let bike = registration.bike
            _ = try await registry.update(
                id: bike.id, ownerToken: registration.ownerToken,
                BikeChange(missing: true, webhookURL: .some("http://127.0.0.1:9/hook")))
            let seen = Date(timeIntervalSince1970: 1_717_228_800)
            let sighting = SightingReport(
                sightingId: UUID().uuidString.lowercased(), bikeId: bike.id, kind: .enter, date: seen, firstSeen: seen,
                lastSeen: seen,
                proximity: "near", rssi: -60, count: 1)
            #expect(try await registry.record(sighting, from: station) == .recorded(notifications: 1))
        }

        let deliveries = Tally()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    while try await registry.deliverDueNotification(
                        now: Date(),
                        { notification in
                            deliveries.count(notification.id)
                            await Task.yield()
                            return .delivered
                        })
                    {}
                }
            }
            try await group.waitForAll()
        }
        let counted = deliveries.counts.withLock { $0 }
        #expect(counted.count == messages, "every message delivered")
        #expect(counted.values.allSatisfy { $0 == 1 }, "delivered more than once: \(counted.filter { $0.value > 1 })")
        let counts = try await registry.notificationCounts()
        #expect(counts.owed == 0 && counts.delivered == messages)
    }
}

private final class Tally: Sendable {
    let counts = Mutex<[String: Int]>([:])
    func count(_ id: String) { counts.withLock { $0[id, default: 0] += 1 } }
}
