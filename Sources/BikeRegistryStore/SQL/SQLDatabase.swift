/// What the registry's SQL asks of a database, which each driver answers in its own way: `SQLiteDatabase` on one
/// file's single writer, `PostgresDatabase` on a pool of connections. The statements and the transactions that use
/// them (`SQLRegistryStore`) are written once above this line; below it is only how a statement reaches the database.
protocol SQLDatabase: Sendable {
    var dialect: RegistrySchema.Dialect { get }

    /// A statement that only reads, on its own.
    func read(_ statement: SQL) async throws -> [SQLRow]

    /// A statement that writes, atomic on its own.
    func write(_ statement: SQL) async throws -> [SQLRow]

    /// Statements that see one moment of the database and write nothing.
    func snapshot<Result: Sendable>(_ body: @escaping @Sendable (any SQLConnection) async throws -> Result)
        async throws -> Result

    /// Statements that write, committed together or not at all: all of `body` or, if it throws, none of it.
    func transaction<Result: Sendable>(_ body: @escaping @Sendable (any SQLConnection) async throws -> Result)
        async throws -> Result
}

/// A connection inside a transaction (or a snapshot): its statements run one after the other.
protocol SQLConnection {
    var dialect: RegistrySchema.Dialect { get }

    /// The statement's rows (none for most that write; `RETURNING` says what one changed).
    func rows(_ statement: SQL) async throws -> [SQLRow]
}

extension SQLConnection {
    /// Runs the statement for what it does; one that renders empty for this dialect (`SQL.postgresOnly`) runs nothing.
    func execute(_ statement: SQL) async throws { _ = try await rows(statement) }

    /// The first row, if there is one.
    func row(_ statement: SQL) async throws -> SQLRow? { try await rows(statement).first }

    /// Whether the statement gave any row (`SELECT 1 …`, `… RETURNING id`).
    func exists(_ statement: SQL) async throws -> Bool { try await !rows(statement).isEmpty }
}

extension SQLDatabase {
    /// The first row, if there is one.
    func readRow(_ statement: SQL) async throws -> SQLRow? { try await read(statement).first }
}
