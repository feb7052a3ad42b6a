import BikeRegistryCore
import Foundation
import GRDB

/// The registry's SQL on one SQLite file (GRDB's pool: readers beside one writer). A transaction is one GRDB write,
/// its async body run there to its end (`CallingThreadExecutor`), so it holds the file's one writer from its first
/// statement to its commit, as SQLite's own transactions do; each write notes the commit counts in the ledger.
struct SQLiteDatabase: SQLDatabase {
    let pool: DatabasePool
    let ledger: CommitLedger?
    /// Each operation told to the store's observer, if it has one.
    var measure = StoreMeasure(observer: nil)

    var dialect: RegistrySchema.Dialect { .sqlite }

    func read(_ statement: SQL) async throws -> [SQLRow] {
        try await measure.run(.read, classify: Self.kind) {
            try await pool.read { db in try Self.rows(statement, db) }
        }
    }

    func write(_ statement: SQL) async throws -> [SQLRow] {
        try await written(.write) { db in try Self.rows(statement, db) }
    }

    func snapshot<Result: Sendable>(_ body: @escaping @Sendable (any SQLConnection) async throws -> Result)
        async throws -> Result
    {
        try await measure.run(.snapshot, classify: Self.kind) {
            try await pool.read { db in
                let connection = Connection(db: db)
                return try CallingThreadExecutor.run { try await body(connection) }
            }
        }
    }

    func transaction<Result: Sendable>(_ body: @escaping @Sendable (any SQLConnection) async throws -> Result)
        async throws -> Result
    {
        try await written(.transaction) { db in
            let connection = Connection(db: db)
            return try CallingThreadExecutor.run { try await body(connection) }
        }
    }

    /// A write transaction, and the counts it leaves noted in the ledger once it has committed.
    func written<Result: Sendable>(
        _ kind: StoreOperation, _ body: @escaping @Sendable (Database) throws -> Result
    ) async throws -> Result {
        let (result, counts) = try await measure.run(kind, classify: Self.kind) {
            try await pool.write { db in (try body(db), try CommitLedger.counts(db)) }
        }
        ledger?.note(counts)
        return result
    }

    /// The kind of SQLite's failure, for the store's observer; nil for the store's own refusal (a
    /// `RegistryStoreError` its transaction threw) and for a cancelled request.
    static func kind(_ error: any Error) -> StoreFailure? {
        switch error {
        case is RegistryStoreError, is CancellationError: return nil
        case let error as DatabaseError:
            switch error.resultCode {
            case .SQLITE_BUSY, .SQLITE_LOCKED: return .busy
            case .SQLITE_CONSTRAINT: return .constraint
            case .SQLITE_FULL, .SQLITE_IOERR, .SQLITE_CORRUPT, .SQLITE_NOTADB, .SQLITE_CANTOPEN, .SQLITE_READONLY:
                return .storage
            default: return .other
            }
        default: return .other
        }
    }

    /// The statement's rows, its compiled form kept by the connection for the next time (the same text is compiled
    /// once per connection).
    static func rows(_ statement: SQL, _ db: Database) throws -> [SQLRow] {
        let (text, values) = statement.rendered(for: .sqlite)
        guard !text.isEmpty else { return [] }
        let compiled = try db.cachedStatement(sql: text)
        try compiled.setArguments(StatementArguments(values.map(\.sqlite)))
        return try Row.fetchAll(compiled).map { row in SQLRow(values: row.databaseValues.map(SQLValue.init)) }
    }

    /// A connection inside one GRDB access. Its `Database` is used only on GRDB's thread, where
    /// `CallingThreadExecutor` runs the body, and only before the access returns: hence unchecked.
    private struct Connection: SQLConnection, @unchecked Sendable {
        let db: Database
        var dialect: RegistrySchema.Dialect { .sqlite }
        func rows(_ statement: SQL) async throws -> [SQLRow] { try SQLiteDatabase.rows(statement, db) }
    }
}

extension SQLValue {
    init(_ value: DatabaseValue) {
        switch value.storage {
        case .null: self = .null(.unknown)
        case .int64(let number): self = .integer(number)
        case .double(let number): self = .real(number)
        case .string(let text): self = .text(text)
        case .blob(let data): self = .text(String(decoding: data, as: UTF8.self))
        }
    }

    var sqlite: (any DatabaseValueConvertible)? {
        switch self {
        case .integer(let number): number
        case .real(let number): number
        case .text(let text): text
        case .boolean(let truth): truth
        case .null: nil
        }
    }
}
