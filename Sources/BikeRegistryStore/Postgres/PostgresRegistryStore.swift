import BikeRegistryCore
import DaemonSupport
import Foundation
import Logging
import PostgresNIO

/// The registry in a PostgreSQL database (postgres-nio's pooled client), for a registry that serves many cafés
/// from more than one machine: every server shares the database, and what one must not do twice (a sighting, a
/// registration, a notification being delivered) is settled in the database, not in a server's memory.
///
/// Transactions are PostgreSQL's default READ COMMITTED; each write is arranged to be right under it (an insert
/// that yields to the row already there, `ON CONFLICT DO NOTHING`, rather than a look before the insert).
public final class PostgresRegistryStore: SQLRegistryStore {
    let client: PostgresClient
    let logger: Logger
    private let running: Task<Void, Never>
    public let location: String
    /// Sightings posted at the same moment, written in one statement (`record`).
    let batches: SightingBatches
    /// The registry's SQL on this database.
    let database: PostgresDatabase

    /// How long an operation may take, from asking the pool for a connection to the last row. Past it the operation
    /// is cancelled and the server answers 503: the pool would otherwise wait as long as the database is away,
    /// and every request with it. 5 s (`standardDeadline`); the tests' stores, sharing two cores with the whole suite
    /// under a sanitizer, are given longer.
    let deadline: Duration
    public static let standardDeadline: Duration = .seconds(5)

    private init(client: PostgresClient, location: String, deadline: Duration, logger: Logger) {
        self.client = client
        self.location = location
        self.deadline = deadline
        self.logger = logger
        running = Task { await client.run() }
        database = PostgresDatabase(client: client, deadline: deadline, logger: logger)
        batches = SightingBatches { items in
            try await Self.write(items, client: client, deadline: deadline, logger: logger)
        }
    }

    /// Brings the schema up to date (`RegistrySchema`) on a connection of its own, which fails at once when the
    /// server cannot be reached or refuses the login (the pool would keep trying), then starts the pool.
    static func open(
        _ location: PostgresLocation, connections: Int, deadline: Duration = standardDeadline, logger: Logger
    ) async throws(RegistryStoreError) -> PostgresRegistryStore {
        var configuration = try location.configuration()
        configuration.options.maximumConnections = max(2, connections)
        do {
            let connection = try await PostgresConnection.connect(
                configuration: try location.connectionConfiguration(), id: 0, logger: logger)
            do {
                try await PostgresMigrator.migrate(connection, logger: logger)
                try await connection.close()
            } catch {
                try? await connection.close()
                throw error
            }
        } catch {
            throw RegistryStoreError(
                "cannot open the registry database \(location): \(PostgresFailure.describe(error))")
        }
        return PostgresRegistryStore(
            client: PostgresClient(configuration: configuration, backgroundLogger: logger),
            location: location.description, deadline: deadline, logger: logger)
    }

    public func close() async {
        running.cancel()
        await running.value
    }

    /// A prepared statement outside a transaction (parsed and planned once per connection), its rows collected.
    /// A statement PostgreSQL rolled back whole to break a deadlock is run again, within the same deadline: on its
    /// own it is atomic, so running it again is exactly what was asked, and the other party has gone on.
    static func prepared<Statement: PostgresPreparedStatement>(
        _ statement: Statement, client: PostgresClient, deadline: Duration, logger: Logger
    ) async throws -> [Statement.Row] where Statement.Row: Sendable {
        try await within(deadline) {
            while true {
                do {
                    var rows: [Statement.Row] = []
                    for try await row in try await client.execute(statement, logger: logger) { rows.append(row) }
                    return rows
                } catch let error as PSQLError where PostgresFailure.isRolledBackToBeRunAgain(error) {
                    logger.info("a statement was rolled back to break a deadlock and is run again")
                    try await Task.sleep(for: .milliseconds(Int.random(in: 5...50)))
                }
            }
        }
    }

    /// One statement outside a transaction, its rows collected.
    func rows(_ query: PostgresQuery) async throws -> [PostgresRow] {
        try await Self.within(deadline) { [client, logger] in
            try await client.query(query, logger: logger).collect()
        }
    }

    /// The operation's result, or an error once `deadline` has passed (`withDeadline`), said for an operator.
    static func within<Value: Sendable>(
        _ deadline: Duration, _ operation: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        do {
            return try await withDeadline(deadline) {
                do {
                    return try await operation()
                } catch {
                    throw RegistryStoreError(PostgresFailure.describe(error))
                }
            }
        } catch is DeadlineExceeded {
            throw RegistryStoreError("PostgreSQL did not answer within \(deadline.components.seconds) s")
        }
    }

    static func seconds(_ date: Date) -> Double { date.timeIntervalSince1970 }
    static func date(_ seconds: Double) -> Date { Date(timeIntervalSince1970: seconds) }
}

/// postgres-nio's errors, said for an operator: the server's own message and SQLSTATE, or what failed on the way.
/// Never the query's values, which may hold a webhook secret.
enum PostgresFailure {
    /// deadlock_detected and serialization_failure: the statement was rolled back whole and nothing of it stays.
    static func isRolledBackToBeRunAgain(_ error: PSQLError) -> Bool {
        ["40P01", "40001"].contains(error.serverInfo?[.sqlState])
    }

    static func describe(_ error: any Error) -> String {
        switch error {
        case let error as RegistryStoreError:
            return error.description
        case let error as PostgresTransactionError:
            let inner = error.beginError ?? error.closureError ?? error.commitError ?? error.rollbackError
            return inner.map(describe) ?? "the transaction failed"
        case let error as PSQLError:
            if let message = error.serverInfo?[.message] {
                return "PostgreSQL: \(message) (SQLSTATE \(error.serverInfo?[.sqlState] ?? "?"))"
            }
            return "PostgreSQL: \(error.code)" + (error.underlying.map { ": \($0)" } ?? "")
        default:
            return "\(error)"
        }
    }
}
