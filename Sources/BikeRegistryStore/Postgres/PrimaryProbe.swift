import BikeRegistryCore
import DaemonSupport
import Logging
import PostgresNIO
import Synchronization

/// Asks a PostgreSQL host what it is, on a connection of its own, as libpq does for `target_session_attrs`: whether it
/// is in recovery (a standby) and whether its sessions are read-only (a demoted primary, or one pg_auto_failover has
/// not yet let take writes).
enum PrimaryProbe {
    /// How long one host may take to answer: a host that hangs (stopped, or cut off) is passed over after this.
    static let patience: Duration = .seconds(2)

    private static let question: PostgresQuery =
        "SELECT pg_is_in_recovery(), current_setting('transaction_read_only') = 'on'"
    private static let ids = Atomic<Int>(1_000_000)

    /// Whether the host will do; thrown when it cannot be reached or refuses the login.
    static func willDo(_ endpoint: PostgresLocation.Endpoint, of location: PostgresLocation, logger: Logger)
        async throws -> Bool
    {
        try await withDeadline(patience) {
            try await onConnection(to: endpoint, of: location, logger: logger) { connection in
                try await answer(connection, location: location, logger: logger)
            }
        }
    }

    /// Whether the host will do and, if it does, its schema brought up to date on the same connection.
    static func migrateIfItWillDo(
        _ endpoint: PostgresLocation.Endpoint, of location: PostgresLocation, logger: Logger
    ) async throws -> Bool {
        try await onConnection(to: endpoint, of: location, logger: logger) { connection in
            guard try await answer(connection, location: location, logger: logger) else { return false }
            try await PostgresMigrator.migrate(connection, logger: logger)
            return true
        }
    }

    /// What a host that answered but would not do is told, for an operator.
    static func refusal(_ endpoint: PostgresLocation.Endpoint, of location: PostgresLocation) -> String {
        let said =
            switch location.sessions {
            case .any: "answers"
            case .readWrite: "takes no writes (target_session_attrs=read-write)"
            case .primary: "is a standby (target_session_attrs=primary)"
            }
        return "\(PostgresLocation.describe(endpoint)) \(said)"
    }

    /// Every host asked at once: the index of the first to answer that it will do, or nil and what each said.
    static func first(of location: PostgresLocation, logger: Logger) async -> (Int?, [String]) {
        let (answers, continuation) = AsyncStream.makeStream(of: (Int, Result<Bool, any Error>).self)
        // Unstructured, so that a host that hangs holds no one up: each ends by its own deadline.
        for (index, endpoint) in location.endpoints.enumerated() {
            Task {
                do {
                    continuation.yield((index, .success(try await willDo(endpoint, of: location, logger: logger))))
                } catch {
                    continuation.yield((index, .failure(error)))
                }
            }
        }
        var refusals: [String] = []
        for await (index, answer) in answers {
            let endpoint = location.endpoints[index]
            switch answer {
            case .success(true):
                continuation.finish()
                return (index, refusals)
            case .success(false): refusals.append(refusal(endpoint, of: location))
            case .failure(let error):
                refusals.append("\(PostgresLocation.describe(endpoint)): \(PostgresFailure.describe(error))")
            }
            if refusals.count == location.endpoints.count { break }
        }
        continuation.finish()
        return (nil, refusals)
    }

    private static func answer(_ connection: PostgresConnection, location: PostgresLocation, logger: Logger)
        async throws -> Bool
    {
        for try await (inRecovery, readOnly) in try await connection.query(question, logger: logger).decode(
            (Bool, Bool).self)
        {
            return location.sessions.accepts(inRecovery: inRecovery, readOnly: readOnly)
        }
        throw RegistryStoreError("PostgreSQL said nothing of whether it takes writes")
    }

    /// The body on a connection made for it, closed after it whatever it does.
    private static func onConnection<Value: Sendable>(
        to endpoint: PostgresLocation.Endpoint, of location: PostgresLocation, logger: Logger,
        _ body: (PostgresConnection) async throws -> Value
    ) async throws -> Value {
        let connection = try await PostgresConnection.connect(
            configuration: try location.connectionConfiguration(for: endpoint),
            id: ids.wrappingAdd(1, ordering: .relaxed).oldValue, logger: logger)
        do {
            let value = try await body(connection)
            try? await connection.close()
            return value
        } catch {
            try? await connection.close()
            throw error
        }
    }
}
