import DaemonSupport
import Logging
import PostgresNIO

/// The registry's SQL on PostgreSQL (postgres-nio's pool, on the host `PostgresPrimary` follows). Every operation,
/// from asking the pool for a connection to the last row, has the store's deadline (`PostgresPrimary.run`); a
/// transaction is the pool's, READ COMMITTED,
/// and a snapshot is REPEATABLE READ READ ONLY.
struct PostgresDatabase: SQLDatabase {
    let primary: PostgresPrimary
    let logger: Logger

    var dialect: RegistrySchema.Dialect { .postgres }

    func read(_ statement: SQL) async throws -> [SQLRow] { try await alone(.read, statement) }

    func write(_ statement: SQL) async throws -> [SQLRow] { try await alone(.write, statement) }

    func snapshot<Result: Sendable>(_ body: @escaping @Sendable (any SQLConnection) async throws -> Result)
        async throws -> Result
    {
        try await transaction(.snapshot) { connection in
            try await connection.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            return try await body(connection)
        }
    }

    func transaction<Result: Sendable>(_ body: @escaping @Sendable (any SQLConnection) async throws -> Result)
        async throws -> Result
    {
        try await transaction(.transaction, body)
    }

    private func transaction<Result: Sendable>(
        _ kind: StoreOperation, _ body: @escaping @Sendable (any SQLConnection) async throws -> Result
    ) async throws -> Result {
        try await primary.run(kind) { [logger] client in
            try await client.withTransaction(logger: logger) { connection in
                try await body(Connection(connection: connection, logger: logger))
            }
        }
    }

    private func alone(_ kind: StoreOperation, _ statement: SQL) async throws -> [SQLRow] {
        try await primary.run(kind) { [logger] client in
            try await Self.rows(try await client.query(PostgresQuery(statement), logger: logger))
        }
    }

    static func rows(_ rows: PostgresRowSequence) async throws -> [SQLRow] {
        var collected: [SQLRow] = []
        for try await row in rows { collected.append(SQLRow(values: try row.map(SQLValue.init))) }
        return collected
    }

    private struct Connection: SQLConnection {
        let connection: PostgresConnection
        let logger: Logger
        var dialect: RegistrySchema.Dialect { .postgres }

        func rows(_ statement: SQL) async throws -> [SQLRow] {
            let query = PostgresQuery(statement)
            guard !query.sql.isEmpty else { return [] }
            return try await PostgresDatabase.rows(try await connection.query(query, logger: logger))
        }
    }
}

extension PostgresQuery {
    /// The statement with PostgreSQL's placeholders and its values bound.
    init(_ statement: SQL) {
        let (text, values) = statement.rendered(for: .postgres)
        var bindings = PostgresBindings(capacity: values.count)
        for value in values {
            switch value {
            case .integer(let number): bindings.append(number)
            case .real(let number): bindings.append(number)
            case .text(let text): bindings.append(text)
            case .boolean(let truth): bindings.append(truth)
            case .null: bindings.appendNull()
            }
        }
        self.init(unsafeSQL: text, binds: bindings)
    }
}

extension SQLValue {
    /// A cell as the schema's types give it: integers, doubles, text and booleans (and `void`, a function's nothing).
    init(_ cell: PostgresCell) throws {
        guard cell.bytes != nil else {
            self = .null(.unknown)
            return
        }
        switch cell.dataType {
        case .bool: self = .boolean(try cell.decode(Bool.self))
        case .int2, .int4, .int8: self = .integer(try cell.decode(Int64.self))
        case .float4, .float8: self = .real(try cell.decode(Double.self))
        case .void: self = .null(.unknown)
        default: self = .text(try cell.decode(String.self))
        }
    }
}
