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
    /// The host operations go to, and its pool, followed when the URL names several and the primary moves.
    let primary: PostgresPrimary
    let logger: Logger
    public let location: String
    /// Sightings posted at the same moment, written in one statement (`record`).
    let batches: SightingBatches
    /// The registry's SQL on this database.
    let database: PostgresDatabase

    /// How long an operation may take, from asking the pool for a connection to the last row. Past it the operation
    /// is cancelled and the server answers 503: the pool would otherwise wait as long as the database is away,
    /// and every request with it. 5 s (`standardDeadline`); the tests' stores, sharing two cores with the whole suite
    /// under a sanitizer, are given longer.
    var deadline: Duration { primary.deadline }
    public static let standardDeadline: Duration = .seconds(5)

    private init(primary: PostgresPrimary, logger: Logger) {
        self.primary = primary
        location = primary.location.description
        self.logger = logger
        database = PostgresDatabase(primary: primary, logger: logger)
        batches = SightingBatches { items in try await Self.write(items, primary: primary, logger: logger) }
    }

    /// Finds a host that will do among the URL's and brings its schema up to date (`PostgresPrimary.open`), then
    /// starts its pool.
    static func open(
        _ location: PostgresLocation, connections: Int, deadline: Duration = standardDeadline,
        observer: (any StoreObserver)? = nil, logger: Logger
    ) async throws(RegistryStoreError) -> PostgresRegistryStore {
        if location.endpoints.count > 1, location.sessions == .any {
            logger.warning(
                "several PostgreSQL hosts and no target_session_attrs, so a standby may be chosen: add ?target_session_attrs=read-write"
            )
        }
        return PostgresRegistryStore(
            primary: try await PostgresPrimary.open(
                location, connections: connections, deadline: deadline, observer: observer, logger: logger),
            logger: logger)
    }

    /// The host the store's operations go to now (`HOST:PORT`, or a socket's path).
    public var primaryHost: String? { primary.host }

    public func close() async { await primary.close() }

    /// A prepared statement outside a transaction (parsed and planned once per connection), its rows collected: the
    /// sightings' batch.
    /// A statement PostgreSQL rolled back whole to break a deadlock is run again, within the same deadline: on its
    /// own it is atomic, so running it again is exactly what was asked, and the other party has gone on.
    static func prepared<Statement: PostgresPreparedStatement>(
        _ statement: Statement, primary: PostgresPrimary, logger: Logger
    ) async throws -> [Statement.Row] where Statement.Row: Sendable {
        try await primary.run(.sightingBatch) { client in
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

    /// One statement outside a transaction, its rows collected; `kind` says whether it reads or writes.
    func rows(_ kind: StoreOperation, _ query: PostgresQuery) async throws -> [PostgresRow] {
        try await primary.run(kind) { [logger] client in try await client.query(query, logger: logger).collect() }
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

    /// The kind of the database's failure, for the store's observer; nil for the store's own refusal (a
    /// `RegistryStoreError` its transaction threw) and for a cancelled request.
    static func kind(_ error: any Error) -> StoreFailure? {
        switch error {
        case is RegistryStoreError, is CancellationError:
            return nil
        case let error as PostgresTransactionError:
            let inner = error.beginError ?? error.closureError ?? error.commitError ?? error.rollbackError
            return inner.map(kind) ?? .other
        case let error as PSQLError:
            if PrimaryLoss.suspected(error) { return .unavailable }
            switch error.serverInfo?[.sqlState] {
            case .some(let state) where isRolledBackToBeRunAgain(error) || state.hasPrefix("40"): return .conflict
            case .some(let state) where state.hasPrefix("23"): return .constraint
            case .some(let state) where state.hasPrefix("53") || state.hasPrefix("58"): return .storage
            case .some("57014"): return .timeout
            default: return .other
            }
        default:
            return PrimaryLoss.suspected(error) ? .unavailable : .other
        }
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
