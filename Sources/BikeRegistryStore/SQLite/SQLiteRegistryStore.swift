import Foundation
import GRDB
import Synchronization

/// The registry in one SQLite file (GRDB), the embedded default: WAL, so the many readers (every station's
/// refresh) run beside the one writer, and synchronous=FULL, so a sighting answered 2xx survives a power cut, not
/// only a crash. One server uses the file; an operator's `station add` beside it waits for the lock.
public final class SQLiteRegistryStore: RegistryStore {
    public let path: String
    let pool: DatabasePool
    /// The notifications a worker of this process is delivering: the file has one server, so this is every holder.
    let delivering = Mutex(Set<String>())

    public var location: String { path }

    public init(path: String, readers: Int = 5) throws(RegistryStoreError) {
        self.path = path
        do {
            var configuration = Configuration()
            configuration.prepareDatabase { db in
                try db.execute(sql: "PRAGMA synchronous = FULL")
                try db.execute(sql: "PRAGMA foreign_keys = ON")
            }
            configuration.busyMode = .timeout(10)
            configuration.maximumReaderCount = max(1, readers)
            pool = try DatabasePool(path: path, configuration: configuration)
            try Self.migrator.migrate(pool)
        } catch {
            throw RegistryStoreError("cannot open the registry database \(path): \(error)")
        }
    }

    public func close() async {
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

    static func seconds(_ date: Date) -> Double { date.timeIntervalSince1970 }
    static func date(_ seconds: Double) -> Date { Date(timeIntervalSince1970: seconds) }
}
