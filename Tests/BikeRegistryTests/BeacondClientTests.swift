import AsyncHTTPClient
import BeaconDelivery
import BeaconEngine
import BeaconRegistryClient
import BeaconTestSupport
import BeaconWire
import BikeRegistryCore
import BikeRegistryStore
import Foundation
import NIOHTTP1
import StationSettings
import Testing

/// beacond's own registry client (HTTPRegistry, as the daemon uses it) against the real bike-registry, with the key
/// as `?key=` and as a bearer token: the list and its 304, sightings delivered and their repeats, a revoked key held.
@Suite(.timeLimit(.minutes(20))) struct BeacondClientTests {
    @Test(arguments: StoreKind.allCases, RegistryConfiguration.Authentication.allCases)
    func beacondsClientWorksAgainstTheRealRegistryUnchanged(
        store: StoreKind, authentication: RegistryConfiguration.Authentication
    ) async throws {
        let directory = try TemporaryDirectory("bike-registry-client")
        defer { directory.remove() }
        let server = try await RegistryHarness(store, directory: directory.path)
        try await withTeardown({ await server.stop() }) {
            let key = try await server.database.addStation(name: "Ace", latitude: 51.5, longitude: -0.12)
            var ids: [UInt16: String] = [:]
            for minor in [UInt16(0), 1, 2] {
                let bike = try await server.register(minor: Int(minor))
                #expect(
                    try await server.request(
                        .PATCH, "/owner/bikes/\(bike.id)", bearer: bike.token, body: #"{"missing":true}"#
                    ).status == 200)
                ids[minor] = bike.id
            }
            _ = try await server.register(minor: 3)  // registered, not missing

            let registry = HTTPRegistry(
                configuration: RegistryConfiguration(
                    location: .http(base: server.baseURL), authentication: authentication, apiKey: APIKey(key),
                    stationID: "ace",
                    latitude: 51.5, longitude: -0.12),
                client: HTTPClient.shared)
            guard
                case .list(let set, let validators, _) = try await registry.fetchMissing(
                    validators: nil, regions: [.findMyBike])
            else {
                Issue.record("no list")
                return
            }
            #expect(Set(set.bikes.map(\.id)) == Set(ids.values))
            #expect(set.statistics.missing == 3 && set.statistics.rejectedTotal == 0)
            guard case .notModified = try await registry.fetchMissing(validators: validators, regions: [.findMyBike])
            else {
                Issue.record("the unchanged list was not answered 304")
                return
            }

            // The engine's own sightings of those bikes, as the daemon would post them.
            var harness = EngineHarness(missingMinors: [0, 1, 2])
            for minor in [UInt16(0), 1, 2] { harness.hear(minor: minor, at: Double(minor)) }
            harness.finish()
            let payloads = harness.sightings.map { sighting in
                (
                    id: sighting.id.description,
                    body: OutgoingSighting(sighting, stationID: "ace", latitude: 51.5, longitude: -0.12).json
                        .replacingOccurrences(
                            of: "\"bike-\(sighting.beacon.minor)\"", with: "\"\(ids[sighting.beacon.minor]!)\"")
                )
            }
            #expect(payloads.count == 6)
            for payload in payloads {
                #expect(await registry.deliver(try #require(OutgoingSighting(stored: payload.body))) == .delivered)
            }
            for payload in payloads {
                #expect(
                    await registry.deliver(try #require(OutgoingSighting(stored: payload.body))) == .delivered,
                    "a repeat")
            }
            #expect(try await server.database.notificationCounts().owed == 0, "no target set, nothing owed")
            let stored = try await server.database.sightings(bikeId: ids[0]!)
            #expect(stored.map(\.kind).sorted() == ["enter", "exit"])

            _ = try await server.database.revokeStation(name: "Ace")
            try await server.client.waitUntilRefused(key)
            let revoked = await registry.deliver(try #require(OutgoingSighting(stored: payloads[0].body)))
            guard case .held(let reason) = revoked else {
                Issue.record("a revoked key's sighting was not held")
                return
            }
            #expect(reason.contains("HTTP 401"))
            await #expect(throws: RegistryError.self) {
                try await registry.fetchMissing(validators: nil, regions: [.findMyBike])
            }
        }
    }
}
