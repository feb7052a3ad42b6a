import BeaconTestSupport
import BikeRegistryCore
import Foundation
import GRDB
import Logging
import NIOConcurrencyHelpers
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
            // Ready: on CI's two cores, with the whole suite beside it, the database can take more than its second.
            let ready = try await Self.readyz(registry, until: 200)
            #expect(ready.status == 200 && ready.body == "ok\n", "\(ready.status) \(ready.body)")
            #expect(ready.headers.first(name: "Cache-Control") == "no-store")

            // Another session holds the writes for 9 s; once it has them, /readyz turns 503 (the answer before it is
            // given for a second at most), each time at its own deadline, not at the end of the hold (SQLite would
            // wait 10 s for its lock, PostgreSQL for the whole hold).
            let holding = NIOLockedValueBox(false)
            let held = Task {
                try await Self.holdWrites(registry.testDatabase, seconds: 9) { holding.withLockedValue { $0 = true } }
            }
            #expect(await eventually(within: 30) { holding.withLockedValue { $0 } }, "the other session has the writes")
            let holdBegan = ContinuousClock.now
            var away: RegistryClient.Answer?
            var took = Duration.zero
            while away == nil && ContinuousClock.now - holdBegan < .seconds(7) {
                let asked = ContinuousClock.now
                let answer = try await registry.request(.GET, "/readyz")
                if answer.status == 503 {
                    away = answer
                    took = ContinuousClock.now - asked
                } else {
                    try await Task.sleep(for: .milliseconds(300))
                }
            }
            let unavailable = try #require(away, "a 503 while the writes were held")
            #expect(
                unavailable.body == "database unavailable\n" && unavailable.headers.first(name: "Retry-After") == "1")
            #expect(
                took < .seconds(8), "answered before the hold ends (9 s; SQLite would wait 10 s for its lock): \(took)")
            #expect(try await registry.request(.GET, "/livez").status == 200)
            try await held.value
            #expect(try await Self.readyz(registry, until: 200).status == 200, "ready again once writes are taken")

            // Many balancers at once are answered from one look at the database, and none is an error.
            let answers = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<200 { group.addTask { try await registry.request(.GET, "/readyz").status } }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(answers.count == 200 && answers.allSatisfy { $0 == 200 || $0 == 503 })

            readiness.stop()
            let stopping = try await registry.request(.GET, "/readyz")
            #expect(stopping.status == 503 && stopping.body == "stopping\n")
            #expect(try await registry.request(.GET, "/livez").status == 200)
        }
    }

    /// `/readyz` asked every 250 ms until it answers `status`, for at most 30 s; the last answer.
    static func readyz(_ registry: RegistryHarness, until status: Int) async throws -> RegistryClient.Answer {
        var answer = try await registry.request(.GET, "/readyz")
        let deadline = ContinuousClock.now + .seconds(30)
        while answer.status != status && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(250))
            answer = try await registry.request(.GET, "/readyz")
        }
        return answer
    }

    /// `serve` as systemd stops it: SIGTERM makes `/readyz` a 503 at once, the server goes on answering for
    /// `--drain-delay`, then it exits 0.
    @Test func sigtermDrainsForTheDelayThenStops() async throws {
        let directory = try TemporaryDirectory("bike-registry-drain")
        defer { directory.remove() }
        let registry = try await RegistryProcess.start(
            database: directory.file("registry.sqlite"), in: directory, arguments: ["--drain-delay", "5s"])
        #expect(try await registry.client.request(.GET, "/readyz").status == 200)
        let terminated = ContinuousClock.now
        registry.server.terminate()
        var status = 0
        for _ in 0..<60 where status != 503 {
            status = try await registry.client.request(.GET, "/readyz").status
            if status != 503 { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(status == 503, "not ready at once")
        #expect(ContinuousClock.now - terminated < .seconds(3), "at once, well inside the delay")
        let during = try await registry.client.request(.GET, "/bikes", bearer: registry.stationKey)
        #expect(during.status == 200, "still serving during the drain delay: \(during.status)")
        let exit = await registry.server.waitForExit(seconds: 15)
        #expect(exit == 0, "\(registry.server.stderr)")
        #expect(ContinuousClock.now - terminated >= .seconds(5), "served for the whole delay")
        #expect(registry.server.stderr.contains("SIGTERM: /readyz answers 503"))
    }

    /// Another session holds the database's writes for `seconds`, saying when it has them: SQLite's write lock, or
    /// PostgreSQL's lock on the bike table, which the readiness check's statement needs.
    static func holdWrites(_ database: TestDatabase, seconds: Double, holding: @escaping @Sendable () -> Void)
        async throws
    {
        switch database.kind {
        case .sqlite:
            let queue = try DatabaseQueue(path: database.location)
            try await queue.writeWithoutTransaction { db in
                try db.execute(sql: "BEGIN IMMEDIATE")
                holding()
                Thread.sleep(forTimeInterval: seconds)
                try db.execute(sql: "COMMIT")
            }
            try queue.close()
        case .postgres:
            let logger = Logger(label: "test-postgres", factory: { _ in SwiftLogNoOpLogHandler() })
            let connection = try await PostgresConnection.connect(
                configuration: try PostgresLocation(database.location).connectionConfiguration(), id: 1, logger: logger)
            do {
                try await connection.query("BEGIN", logger: logger)
                try await connection.query("LOCK TABLE bike IN EXCLUSIVE MODE", logger: logger)
                holding()
                try await Task.sleep(for: .seconds(seconds))
                try await connection.query("COMMIT", logger: logger)
                try await connection.close()
            } catch {
                try? await connection.close()
                throw error
            }
        }
    }
}
