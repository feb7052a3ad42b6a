public import BikeRegistryCore
import Foundation
import GRDB

#if canImport(Glibc)
import Glibc
#endif

/// A SQLite registry copied while it serves, and any copy checked before it is trusted. The copy is SQLite's online
/// backup (through GRDB) read in one step inside one read transaction: in WAL mode that is one moment of the
/// database, and the server's writes go on beside it. The copy is one file (its journal is made a rollback journal,
/// so no `-wal` goes with it), created 0600 and never over another file.
public enum SQLiteBackup {
    /// What a check found.
    public struct Check: Sendable, Equatable {
        /// `PRAGMA integrity_check`'s lines: `["ok"]` for a sound file.
        public var integrity: [String]
        /// The migrations the file has applied, and those of this release it lacks or does not know.
        public var applied: [String]
        public var missing: [String]
        public var unknown: [String]
        public var bikes: Int
        public var sightings: Int
        public var stations: Int

        /// Sound, and of this release's schema: a registry started on it serves it as it is.
        public var passed: Bool { integrity == ["ok"] && missing.isEmpty && unknown.isEmpty }

        /// The newest migration it has, as the operator reads the schema's version.
        public var schema: String { applied.last ?? "none" }
    }

    /// Copies the registry at `source` to a new file at `destination`, then checks the copy. Throws, leaving no file
    /// behind, when the copy cannot be made; a copy made but failing its check is left for the operator to look at
    /// and the check says why.
    public static func backup(from source: String, to destination: String) throws(RegistryStoreError) -> Check {
        guard FileManager.default.fileExists(atPath: source) else {
            throw RegistryStoreError("no registry database at \(source)")
        }
        let created = open(destination, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard created >= 0 else {
            let reason =
                errno == EEXIST
                ? "it exists already, and a backup never replaces a file" : String(cString: strerror(errno))
            throw RegistryStoreError("cannot create the backup \(destination): \(reason)")
        }
        _ = fchmod(created, 0o600)  // whatever the umask took away, and nothing more
        Glibc.close(created)
        do {
            let from = try DatabaseQueue(path: source, configuration: readOnly)
            let to = try DatabaseQueue(path: destination)
            try from.backup(to: to)
            try to.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA journal_mode = DELETE") }
            try from.close()
            try to.close()
        } catch {
            unlink(destination)
            for file in [destination + "-wal", destination + "-shm", destination + "-journal"] { unlink(file) }
            throw RegistryStoreError("cannot back up \(source) to \(destination): \(error)")
        }
        return try check(destination)
    }

    /// Checks the file without changing it: SQLite's integrity check, the migrations against this release's, and
    /// what it holds.
    public static func check(_ path: String) throws(RegistryStoreError) -> Check {
        guard FileManager.default.fileExists(atPath: path) else {
            throw RegistryStoreError("no database file at \(path)")
        }
        do {
            let queue = try DatabaseQueue(path: path, configuration: readOnly)
            defer { try? queue.close() }
            return try queue.read { db in
                let integrity = try String.fetchAll(db, sql: "PRAGMA integrity_check")
                let applied =
                    try db.tableExists("grdb_migrations")
                    ? try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY rowid") : []
                let known = RegistrySchema.migrations.map(\.identifier)
                func count(_ table: String) throws -> Int {
                    try db.tableExists(table) ? try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table)") ?? 0 : 0
                }
                return Check(
                    integrity: integrity, applied: applied, missing: known.filter { !applied.contains($0) },
                    unknown: applied.filter { !known.contains($0) }, bikes: try count("bike"),
                    sightings: try count("sighting"), stations: try count("station"))
            }
        } catch {
            throw RegistryStoreError("cannot check \(path): \(error)")
        }
    }

    /// Read only: neither the backup nor the check writes to the file it reads.
    private static var readOnly: Configuration {
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(10)
        return configuration
    }
}
