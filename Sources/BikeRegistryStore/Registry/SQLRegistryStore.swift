/// `RegistryStore` written once for both databases: every statement and every transaction the two stores share, on
/// a `SQLDatabase` that each driver gives (`SQLiteRegistryStore`, `PostgresRegistryStore`). A driver implements only
/// what is its own: how it opens and closes, PostgreSQL's batched sightings and its leases on messages, SQLite's
/// sightings on its one writer.
///
/// Each transaction reads what its decision needs, asks the domain's pure decision (`ReportStep`, `SweepStep`,
/// `AbuseStep`, `EmailStep`), and writes the steps it gives, in the same transaction.
protocol SQLRegistryStore: RegistryStore {
    associatedtype Database: SQLDatabase
    var database: Database { get }
}

extension SQLRegistryStore {
    /// Statements outside a transaction, one at a time, as a connection reads them.
    var reads: DatabaseReads<Database> { DatabaseReads(database: database) }
}

/// The database's reads as a connection's, so a query written for a transaction serves outside one too.
struct DatabaseReads<Database: SQLDatabase>: SQLConnection {
    let database: Database
    var dialect: RegistrySchema.Dialect { database.dialect }
    func rows(_ statement: SQL) async throws -> [SQLRow] { try await database.read(statement) }
}

extension SQLRegistryStore {
    /// Throws unless the database takes a write now: a statement that writes nothing, which a read-only session (a
    /// standby, a demoted primary) refuses and SQLite's writer must be free to run.
    public func takesAWrite() async throws {
        _ = try await database.write("UPDATE bike SET id = id WHERE 1 = 0")
    }
}
