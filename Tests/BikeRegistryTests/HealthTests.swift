import BeaconTestSupport
import BikeRegistryCore
import Foundation
import GRDB
import Logging
import NIOHTTP1
import PostgresNIO
import Testing

@testable import BikeRegistryServer
@testable import BikeRegistryStore

/// `/livez` and `/readyz` for load balancers (issue 52): ready only while the database takes a write within a second
/// and the server is not stopping, and on SIGTERM not ready at once while the server serves on for its drain delay.
@Suite(.timeLimit(.minutes(5))) struct HealthTests {
    /// Both stores: the database's writes held by another session make `/readyz` a 503 within about a second, and
    /// it is 200 again once they are let go; a server that is stopping says so whatever its database does. `/livez`
    /// answers throughout. Neither needs a key or says more than a word.
    @Test(arguments: StoreKind.allCases) func readyOnlyWhileTheDatabaseTakesAWriteAndNotStopping(store: StoreKind)
        async throws
    {
        let directory = try TemporaryDirectory("bike-registry-health")
        defer { directory.remove() }
        let readiness = Readiness()
        let registry = try await RegistryHarness(store, directory: directory.path, transport: .inProcess) {
            $0.readiness = readiness
        }
        try await withTeardown({ await registry.stop() }) {
            let live = try await registry.request(.GET, "/livez")
            #expect(live.status == 200 && live.body == "ok\n")
            let ready = try await registry.request(.GET, "/readyz")
            #expect(ready.status == 200 && ready.body == "ok\n")
            #expect(ready.headers.first(name: "Cache-Control") == "no-store")

            let held = Task { try await Self.holdWrites(registry.testDatabase, seconds: 4) }
            try await Task.sleep(for: .milliseconds(1_500))  // the answer before is no longer given again
            let started = ContinuousClock.now
            let away = try await registry.request(.GET, "/readyz")
            #expect(away.status == 503 && away.body == "database unavailable\n", "\(away.status) \(away.body)")
            #expect(away.headers.first(name: "Retry-After") == "1")
            #expect(ContinuousClock.now - started < .seconds(2.5), "answered at the readiness check's own deadline")
            #expect(try await registry.request(.GET, "/livez").status == 200)
            try await held.value

            var back = 0
            for _ in 0..<40 where back != 200 {
                try await Task.sleep(for: .milliseconds(250))
                back = try await registry.request(.GET, "/readyz").status
            }
            #expect(back == 200, "ready again once the database takes writes")

            // Many balancers at once are answered from one look at the database.
            let answers = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<200 { group.addTask { try await registry.request(.GET, "/readyz").status } }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(answers.allSatisfy { $0 == 200 })

            readiness.stop()
            let stopping = try await registry.request(.GET, "/readyz")
            #expect(stopping.status == 503 && stopping.body == "stopping\n")
            #expect(try await registry.request(.GET, "/livez").status == 200)
        }
    }

    /// `serve` as systemd stops it: SIGTERM makes `/readyz` a 503 at once, the server goes on answering for
    /// `--drain-delay`, then it exits 0.
    @Test func sigtermDrainsForTheDelayThenStops() async throws {
        let directory = try TemporaryDirectory("bike-registry-drain")
        defer { directory.remove() }
        let registry = try await RegistryProcess.start(
            database: directory.file("registry.sqlite"), in: directory, arguments: ["--drain-delay", "3s"])
        #expect(try await registry.client.request(.GET, "/readyz").status == 200)
        let terminated = ContinuousClock.now
        registry.server.terminate()
        var status = 0
        for _ in 0..<40 where status != 503 {
            status = try await registry.client.request(.GET, "/readyz").status
            if status != 503 { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(status == 503, "not ready at once")
        #expect(ContinuousClock.now - terminated < .seconds(1.5))
        try await Task.sleep(for: .seconds(1))
        let during = try await registry.client.request(.GET, "/bikes", bearer: registry.stationKey)
        #expect(during.status == 200, "still serving during the drain delay: \(during.status)")
        let exit = await registry.server.waitForExit(seconds: 15)
        #expect(exit == 0, "\(registry.server.stderr)")
        #expect(ContinuousClock.now - terminated >= .seconds(3), "served for the whole delay")
        #expect(registry.server.stderr.contains("SIGTERM: /readyz answers 503"))
    }

    /// Another session holds the database's writes for `seconds`: SQLite's write lock, or PostgreSQL's lock on the
    /// bike table, which the readiness check's statement needs.
    static func holdWrites(_ database: TestDatabase, seconds: Double) async throws {
        switch database.kind {
        case .sqlite:
            let queue = try DatabaseQueue(path: database.location)
            try await queue.writeWithoutTransaction { db in
                try db.execute(sql: "BEGIN IMMEDIATE")
                Thread.sleep(forTimeInterval: seconds)
                try db.execute(sql: "COMMIT")
            }
            try queue.close()
        case .postgres:
            try await database.execute([
                "BEGIN", "LOCK TABLE bike IN EXCLUSIVE MODE", "SELECT pg_sleep(\(seconds))", "COMMIT",
            ])
        }
    }
}
