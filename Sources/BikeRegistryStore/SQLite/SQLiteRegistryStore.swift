public import BikeRegistryCore
public import Foundation
import GRDB
public import Logging

#if canImport(Glibc)
import Glibc
#endif

/// The registry in one SQLite file (GRDB), the embedded default: WAL, so the many readers (every station's
/// refresh) run beside the one writer, and synchronous=FULL, so a sighting answered 2xx survives a power cut, not
/// only a crash. One server uses the file; an operator's `station add` beside it waits for the lock.
public final class SQLiteRegistryStore: SQLRegistryStore {
    public let path: String
    let pool: DatabasePool
    /// What has been committed, noted beside the file (nil if the note cannot be written).
    let ledger: CommitLedger?
    /// The registry's SQL on this file.
    let database: SQLiteDatabase

    public var location: String { path }
    public var primaryHost: String? { nil }

    /// - Parameter mode: the permissions the database and every file beside it (`-wal`, `-shm`, the commit ledger)
    ///   are created with, whatever the umask: they hold webhook secrets in clear. Files there already lose every
    ///   permission of other users (an operator's `station add` beside the service keeps the service's group).
    ///   - observer: told of each operation (`serve --metrics-listen`).
    public init(
        path: String, readers: Int = 5, mode: mode_t = 0o600, observer: (any StoreObserver)? = nil,
        logger: Logger = Logger(label: "bike-registry")
    ) throws(RegistryStoreError) {
        self.path = path
        do {
            try Self.restrict(path, to: mode)
            var configuration = Configuration()
            configuration.prepareDatabase { db in
                try db.execute(sql: "PRAGMA synchronous = FULL")
                try db.execute(sql: "PRAGMA foreign_keys = ON")
            }
            configuration.busyMode = .timeout(10)
            configuration.maximumReaderCount = max(1, readers)
            pool = try DatabasePool(path: path, configuration: configuration)
            try Self.migrator.migrate(pool)
        } catch let error as RegistryStoreError {
            throw error
        } catch {
            throw RegistryStoreError("cannot open the registry database \(path): \(error)")
        }
        ledger = CommitLedger(databasePath: path, mode: mode)
        database = SQLiteDatabase(pool: pool, ledger: ledger, measure: StoreMeasure(observer: observer))
        checkNothingCommittedIsMissing(logger: logger)
    }

    /// Creates the database file with `mode` if it is not there (SQLite then gives its `-wal` and `-shm` the same),
    /// and takes every permission of other users away from the files that are.
    private static func restrict(_ path: String, to mode: mode_t) throws(RegistryStoreError) {
        let created = open(path, O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        if created >= 0 {
            _ = fchmod(created, mode)  // the umask took bits away from `mode` at creation
            Glibc.close(created)
        } else if errno != EEXIST {
            throw RegistryStoreError(
                "cannot open the registry database \(path): \(String(cString: strerror(errno)))")
        }
        for file in [path, path + "-wal", path + "-shm", path + "-commits"] {
            var status = stat()
            if stat(file, &status) == 0, status.st_mode & 0o007 != 0 { _ = chmod(file, status.st_mode & 0o770) }
        }
    }

    /// Compares the ledger's counts with the database's, logs what is missing, and notes the database's.
    private func checkNothingCommittedIsMissing(logger: Logger) {
        guard let ledger, let held = try? pool.read(CommitLedger.counts) else { return }
        let lost = CommitLedger.lost(noted: ledger.read(), held: held)
        if !lost.isEmpty {
            logger.error(
                "the registry database is missing changes it had committed: \(lost); its -wal file was probably deleted or replaced after an unclean stop. Sightings and registrations answered then are lost, and owners whose links were made then get 401",
                metadata: ["database": "\(path)", "ledger": "\(ledger.path)"])
        }
        ledger.note(held)
    }

    /// Copies what the `-wal` holds into the database file first, so a stopped registry's data is all in that one
    /// file (GRDB's readers are read-only connections, which SQLite does not let checkpoint as they close).
    public func close() async {
        _ = try? await pool.writeWithoutTransaction { db in try db.checkpoint(.truncate) }
        try? pool.close()
    }

    private static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        for migration in RegistrySchema.migrations {
            migrator.registerMigration(migration.identifier) { db in
                for statement in migration.statements(.sqlite) { try db.execute(sql: statement) }
            }
        }
        return migrator
    }
}
