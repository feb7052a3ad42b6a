import BikeRegistryCore
import Foundation
import GRDB
import Logging
import NIOConcurrencyHelpers
import PostgresNIO
import Synchronization
import Testing

@testable import BikeRegistryStore

/// The two stores every bike-registry test runs against, the same test for each.
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite, postgres

    var testDescription: String { rawValue }
}

/// A new, empty database for one test: a file in the test's directory, or a database of its own on the test
/// PostgreSQL server (scripts/test-postgres makes it ready; BIKE_REGISTRY_TEST_POSTGRES names another), dropped after.
struct TestDatabase: Sendable {
    let kind: StoreKind
    /// What `--database` takes: the file's path or the database's URL.
    let location: String
    fileprivate let name: String?

    static func make(_ kind: StoreKind, in directory: String) async throws -> TestDatabase {
        switch kind {
        case .sqlite:
            return TestDatabase(kind: kind, location: directory + "/registry.sqlite", name: nil)
        case .postgres:
            let name = try await TestPostgres.createDatabase()
            return TestDatabase(kind: kind, location: TestPostgres.url(database: name), name: name)
        }
    }

    /// - Parameter postgresDeadline: 30 s for one PostgreSQL operation, not the server's 5 s: the whole suite under a
    ///   sanitizer on two cores kept PostgreSQL operations waiting for their turn past 5 s (CI's sanitizer steps of
    ///   61ac72e and df2d3a9, fifteen tests at once). A test of the deadline itself asks for the server's.
    func open(postgresDeadline: Duration = .seconds(30), observer: (any StoreObserver)? = nil) async throws
        -> any RegistryStore
    {
        // Few connections each: the tests run side by side against one server (300 connections, scripts/test-postgres).
        try await RegistryStores.open(
            location, connections: 4, postgresDeadline: postgresDeadline, observer: observer,
            logger: Logger(label: "bike-registry-test", factory: { _ in SwiftLogNoOpLogHandler() }))
    }

    /// The notification counts once nothing is owed (or after `seconds`), read through a connection of its own: for
    /// a registry in another process. Every message delivered or given up has been received: a delivery is written
    /// after its endpoint answered.
    func settled(seconds: Double = 30) async throws -> NotificationCounts {
        let store = try await open()
        let deadline = ContinuousClock.now + .seconds(seconds)
        do {
            var counts = try await store.notificationCounts()
            while counts.owed > 0 && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
                counts = try await store.notificationCounts()
            }
            await store.close()
            return counts
        } catch {
            await store.close()
            throw error
        }
    }

    func drop() async {
        if let name { await TestPostgres.dropDatabase(name) }
    }

    /// Runs `statements` on the database from outside any store, as an older release or an operator would: GRDB on
    /// the file, or a connection of its own to the PostgreSQL database.
    func execute(_ statements: [String]) async throws {
        switch kind {
        case .sqlite:
            let queue = try DatabaseQueue(path: location)
            try await queue.write { db in for statement in statements { try db.execute(sql: statement) } }
            try queue.close()
        case .postgres:
            let logger = Logger(label: "test-postgres", factory: { _ in SwiftLogNoOpLogHandler() })
            let connection = try await PostgresConnection.connect(
                configuration: try PostgresLocation(location).connectionConfiguration(), id: 1, logger: logger)
            do {
                for statement in statements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.close()
            } catch {
                try? await connection.close()
                throw error
            }
        }
    }

    /// The table in which each store records the migrations it has run.
    var migrationsTable: String { kind == .sqlite ? "grdb_migrations" : "registry_migrations" }
}

/// The test PostgreSQL server: a database per test, named for this process so that one left by a test process that
/// died is dropped by the next.
///
/// A test's database is emptied when it is done (its schema dropped and made anew, with its connections ended) and
/// handed to a later test, not dropped: DROP DATABASE makes PostgreSQL checkpoint at once, and with dozens of new
/// databases written since the last checkpoint, one synced 8,824 files for 9 s, past the 5 s every store operation
/// has, and fifteen tests beside it failed (CI's sanitizer steps of 61ac72e and df2d3a9). What is left at the end is
/// dropped by the next test process, or by `scripts/test-postgres --drop-test-databases` (`.ci/run` between steps).
enum TestPostgres {
    static let server: String =
        ProcessInfo.processInfo.environment["BIKE_REGISTRY_TEST_POSTGRES"]
        ?? "postgres://beacond_test:beacond_test@127.0.0.1:5432/postgres?sslmode=disable"
    private static let counter = Atomic(0)
    private static let swept = NIOLockedValueBox(false)
    /// Emptied databases of this process, ready for the next test.
    private static let emptied = NIOLockedValueBox([String]())

    static func url(database: String) -> String {
        guard var components = URLComponents(string: server) else { return server }
        components.path = "/" + database
        return components.string ?? server
    }

    /// Whether a PostgreSQL server answers at all, asked once a process: without one, the PostgreSQL cases skip
    /// at once rather than each waiting out the pool's retries.
    private static let answering = Task<String?, Never> {
        let logger = Logger(label: "test-postgres", factory: { _ in SwiftLogNoOpLogHandler() })
        do {
            let connection = try await PostgresConnection.connect(
                configuration: try PostgresLocation(server).connectionConfiguration(), id: 0, logger: logger)
            try await connection.close()
            return nil
        } catch {
            return PostgresFailure.describe(error)
        }
    }
    private static let toldOnce = NIOLockedValueBox(false)

    /// Skips the running test case when no server answers, with one line on standard error saying how to run them;
    /// fails it instead when `BEACOND_REQUIRE_POSTGRES=1` (`.ci/run`), where a missing server is a broken machine.
    static func requireServer() async throws {
        guard let failure = await answering.value else { return }
        let unavailable = TestPostgresUnavailable(detail: failure)
        if ProcessInfo.processInfo.environment["BEACOND_REQUIRE_POSTGRES"] == "1" { throw unavailable }
        if toldOnce.withLockedValue({ told in
            defer { told = true }
            return !told
        }) {
            FileHandle.standardError.write(Data("bike-registry tests: PostgreSQL cases skipped: \(unavailable)\n".utf8))
        }
        #if compiler(>=6.3)
        try Test.cancel("no PostgreSQL server: scripts/test-postgres starts one")
        #else
        // Swift 6.2 (Debian's, the arm64 build's) has no Test.cancel: the case fails, saying why.
        throw unavailable
        #endif
    }

    static func createDatabase() async throws -> String {
        try await requireServer()
        if let emptied = emptied.withLockedValue({ $0.popLast() }) { return emptied }
        let name = "btest_\(getpid())_\(counter.add(1, ordering: .relaxed).newValue)"
        try await withAdministration { connection, logger in
            if swept.withLockedValue({ done in
                defer { done = true }
                return !done
            }) {
                try await dropLeftovers(connection, logger)
            }
            try await connection.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: logger)
        }
        return name
    }

    /// Empties the database for a later test; drops it if it cannot be emptied.
    static func dropDatabase(_ name: String) async {
        do {
            try await TestDatabase(kind: .postgres, location: url(database: name), name: name).execute([
                """
                SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                WHERE datname = current_database() AND pid <> pg_backend_pid()
                """,
                "DROP SCHEMA public CASCADE", "CREATE SCHEMA public",
            ])
            emptied.withLockedValue { $0.append(name) }
        } catch {
            try? await withAdministration { connection, logger in
                try await connection.query(
                    PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"), logger: logger)
            }
        }
    }

    /// Statements run as the tests' role on its own connection (for a test that changes a database from outside).
    static func administer(_ statements: String...) async throws {
        try await requireServer()
        try await withAdministration { connection, logger in
            for statement in statements {
                try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
            }
        }
    }

    /// Databases of test processes no longer running.
    private static func dropLeftovers(_ connection: PostgresConnection, _ logger: Logger) async throws {
        var names: [String] = []
        for try await name in try await connection.query(
            "SELECT datname FROM pg_database WHERE datname LIKE 'btest\\_%'", logger: logger
        ).decode(String.self) {
            names.append(name)
        }
        for name in names {
            let pid = name.split(separator: "_").dropFirst().first.flatMap { pid_t($0) } ?? 0
            if pid != getpid(), kill(pid, 0) != 0 {
                try await connection.query(
                    PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"), logger: logger)
            }
        }
    }

    private static func withAdministration(_ body: (PostgresConnection, Logger) async throws -> Void) async throws {
        let logger = Logger(label: "test-postgres", factory: { _ in SwiftLogNoOpLogHandler() })
        let client = PostgresClient(
            configuration: try PostgresLocation(server).configuration(), backgroundLogger: logger)
        let running = Task { await client.run() }
        defer { running.cancel() }
        do {
            try await client.withConnection { try await body($0, logger) }
        } catch {
            throw TestPostgresUnavailable(detail: PostgresFailure.describe(error))
        }
    }
}

struct TestPostgresUnavailable: Error, CustomStringConvertible {
    var detail: String
    var description: String {
        "the test PostgreSQL server (\((try? PostgresLocation(TestPostgres.server).description) ?? TestPostgres.server)) is not usable: \(detail). "
            + "scripts/test-postgres starts Debian's and makes the tests' role; BIKE_REGISTRY_TEST_POSTGRES names another."
    }
}
