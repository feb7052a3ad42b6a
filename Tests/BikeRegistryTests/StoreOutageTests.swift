import BeaconTestSupport
import BikeRegistryCore
import BikeRegistryStore
import Foundation
import Logging
import NIOHTTP1
import PostgresNIO
import Testing

/// The database goes away under a running server (PostgreSQL refusing every connection to it): a request that needs it
/// is answered 503 with Retry-After within seconds, not left hanging and not 500, and nothing is half-done; a
/// station's refresh is still answered from what the server holds in memory; and the server serves again once the
/// database is back, without a restart.
///
/// Its subject is the server's own 5 s deadline, so it is a time, and not run in `.ci/run`'s sanitizer step
/// (BEACOND_LOAD_TESTS=off): there, with the whole suite instrumented beside it, the setup's own PostgreSQL requests
/// waited past 5 s (CI's ThreadSanitizer step of 882a319). It runs in the plain step on every commit.
@Suite(.disabled(if: LoadTests.areOff), .timeLimit(.minutes(20)))
struct StoreOutageTests {
    @Test func aDatabaseThatRefusesConnectionsIsA503UntilItIsBack() async throws {
        let directory = try TemporaryDirectory("bike-registry-outage")
        defer { directory.remove() }
        // The server's own deadline, 5 s: this is its test.
        let registry = try await RegistryHarness(
            .postgres, directory: directory.path, postgresDeadline: PostgresRegistryStore.standardDeadline)
        try await withTeardown({ await registry.stop() }) {
            let key = try await registry.database.addStation(name: "Ace", latitude: 51.5, longitude: -0.2)
            let bike = try await registry.register(minor: 101)
            #expect(
                try await registry.request(
                    .PATCH, "/owner/bikes/\(bike.id)", bearer: bike.token, body: #"{"missing":true}"#
                ).status == 200)
            let name = try #require(URLComponents(string: registry.testDatabase.location)?.path.dropFirst())
            let list = try await registry.request(.GET, "/bikes?missing=true", bearer: key)
            let etag = try #require(list.headers.first(name: "ETag"))

            try await TestPostgres.administer(
                "ALTER DATABASE \(name) CONNECTION LIMIT 0",
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\(name)' AND pid <> pg_backend_pid()"
            )
            let sighting = RegistryHarness.sighting(bikeId: bike.id)
            let started = ContinuousClock.now
            let refused = try await registry.post(sighting, key: key)
            #expect(
                refused.status == 503 && refused.headers.first(name: "Retry-After") != nil,
                "\(refused.status) \(refused.body)")
            #expect(ContinuousClock.now - started < .seconds(15), "answered within the store's deadline")
            #expect(
                try await registry.request(.GET, "/bikes?missing=true", bearer: key, headers: [("If-None-Match", etag)])
                    .status == 304,
                "a refresh is answered from memory")
            #expect(try await registry.request(.GET, "/owner/bikes/\(bike.id)", bearer: bike.token).status == 503)

            try await TestPostgres.administer("ALTER DATABASE \(name) CONNECTION LIMIT -1")
            var status = 0
            for _ in 0..<60 where status != 201 {
                status = try await registry.post(sighting, key: key).status
                if status != 201 { try await Task.sleep(for: .milliseconds(500)) }
            }
            #expect(status == 201, "served again once the database was back")
            #expect(
                try await registry.post(sighting, key: key).status == 200,
                "and the refused attempt left nothing behind but this one")
        }
    }
}
