import BeaconTestSupport
import BikeRegistryCore
import BikeRegistryServer
import BikeRegistryStore
import Foundation
import NIOHTTP1
import Testing

/// One slow endpoint holds up only itself (issue 37, item 3): eight endpoints that answer at once and then trickle
/// their bodies, each owed messages all along, and a ninth owner's 100 notifications each arrive within 2 s (the
/// goal is the 99th percentile; BENCHMARKS.md records the figures, with the same owner's latency and no slow
/// endpoint, measured in the same run, as the baseline). Before, the worker waited for its whole group of lanes,
/// and on SQLite the lanes took the same message: the ninth owner waited for the slowest.
///
/// A speed, so not run in `.ci/run`'s sanitizer step (BEACOND_LOAD_TESTS=off), where its load starved the PostgreSQL
/// tests beside it; it runs in the plain step on every commit.
@Suite(.disabled(if: LoadTests.areOff), .timeLimit(.minutes(20)))
struct SlowEndpointTests {
    @Test(arguments: StoreKind.allCases) func eightTricklingEndpointsDoNotDelayANinthOwner(store: StoreKind)
        async throws
    {
        let directory = try TemporaryDirectory("bike-registry-slow")
        defer { directory.remove() }
        let receiver = NotificationReceiver()
        try await receiver.start()
        var endpoints: [TricklingEndpoint] = []
        for _ in 0..<8 { endpoints.append(await TricklingEndpoint(every: .seconds(1))) }
        let slow = endpoints
        // A minute's deadline, so each slow endpoint holds its first delivery for the whole test however slowly the
        // machine runs it: the lanes, not the deadline, are what is measured.
        let registry = try await RegistryHarness(store, directory: directory.path, requestsPerMinute: 100_000) {
            $0.deliveryDeadline = .seconds(60)
        }
        try await withTeardown({
            await registry.stop()
            for endpoint in slow { await endpoint.stop() }
            await receiver.stop()
        }) {
            let key = try await registry.database.addStation(name: "Ace", latitude: 51.5, longitude: -0.2)
            let owner = try await registry.registerMissing(minor: 100, webhook: receiver.url("/owner"))

            let baseline = try await Self.latencies(
                of: 100, for: owner.id, from: receiver, registry: registry, key: key)
            // Each slow endpoint's bike, seen on three visits: three messages each, all due now, more than a lane each.
            var visit = 0
            for (index, endpoint) in slow.enumerated() {
                let bike = try await registry.registerMissing(minor: 200 + index, webhook: endpoint.url)
                for _ in 0..<3 {
                    visit += 1
                    let sighting = RegistryHarness.sighting(
                        bikeId: bike.id, firstSeen: Self.time(visit), minor: 200 + index)
                    #expect(try await registry.post(sighting, key: key).status == 201)
                }
            }
            #expect(
                await eventually(within: 20) { slow.allSatisfy { !$0.started.isEmpty } },
                "every slow endpoint is being answered")
            let loaded = try await Self.latencies(
                of: 100, for: owner.id, from: receiver, registry: registry, key: key, after: 100)
            #expect(slow.allSatisfy { $0.started.count == 1 }, "one lane each: the others wait for it")
            let (p50, p99) = (Self.percentile(loaded, 0.5), Self.percentile(loaded, 0.99))
            print(
                "SlowEndpointTests \(store): a ninth owner's notification with 8 trickling endpoints: p50 \(p50) ms, "
                    + "p99 \(p99) ms (baseline without them: p50 \(Self.percentile(baseline, 0.5)) ms, p99 "
                    + "\(Self.percentile(baseline, 0.99)) ms; \(loaded.count) notifications)")
            #expect(loaded.count == 100 && p99 <= 2_000, "p99 \(p99) ms over \(loaded.count)")
        }
    }

    /// Posts `count` new visits of the bike one after another, each once the one before it has reached the owner:
    /// the milliseconds from each post's answer to its message's arrival. Stops at the first that takes over 10 s.
    static func latencies(
        of count: Int, for bikeId: String, from receiver: NotificationReceiver, registry: RegistryHarness,
        key: String, after: Int = 0
    ) async throws -> [Int] {
        var latencies: [Int] = []
        for index in 0..<count {
            let sighting = RegistryHarness.sighting(bikeId: bikeId, firstSeen: time(10_000 + after + index), minor: 100)
            let expected = after + index + 1
            #expect(try await registry.post(sighting, key: key).status == 201)
            let posted = ContinuousClock.now
            guard await eventually(within: 10, { receiver.received.count >= expected }) else { break }
            let took = ContinuousClock.now - posted
            latencies.append(
                Int(took.components.seconds) * 1000 + Int(took.components.attoseconds / 1_000_000_000_000_000))
        }
        return latencies
    }

    static func time(_ visit: Int) -> String {
        ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: 1_717_228_800 + Double(visit) * 60))
    }

    static func percentile(_ values: [Int], _ fraction: Double) -> Int {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return Int.max }
        return sorted[min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.up)) - 1)]
    }
}
