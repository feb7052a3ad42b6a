import ArgumentParser
import BikeRegistryStore
import Foundation

/// `bike-registry backup --to FILE`: a SQLite registry copied while it serves, and the copy checked.
struct BackupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Copy a SQLite registry while it serves, and check the copy.",
        discussion: """
            SQLite's online backup of one moment of the database: the server goes on taking sightings beside it. \
            The copy is one file, created 0600, never over a file that exists; it is done only once it passes \
            `bike-registry check` (SQLite's integrity check and this release's schema). Run it as the service's \
            user (sudo -u bike-registry). For PostgreSQL, pg_dump backs up a live database: docs/registry.md \
            ("Backups") gives it and how to restore either.
            """)

    @Option(help: "The new file to copy the registry to.") var to: String
    @Flag(help: "One JSON object.") var json = false
    @OptionGroup var database: DatabaseOption

    func run() throws {
        guard !RegistryStores.isPostgres(database.location) else {
            throw ValidationError(
                "backup copies a SQLite file; a PostgreSQL registry is backed up with pg_dump (docs/registry.md, \"Backups\")"
            )
        }
        let check: SQLiteBackup.Check
        do {
            check = try SQLiteBackup.backup(from: database.location, to: to)
        } catch {
            FileHandle.standardError.write(Data("bike-registry: \(error)\n".utf8))
            throw ExitCode(73)
        }
        try CheckCommand.report(check, of: to, json: json, done: "backed up \(database.location) to")
    }
}

/// `bike-registry check --database FILE`: whether a SQLite file is a sound registry of this release.
struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Check a SQLite registry file (a backup, or the live one): integrity and schema.",
        discussion: """
            SQLite's PRAGMA integrity_check, and the schema's migrations against this release's: a file that passes \
            opens in this release's `serve` as it is. Changes nothing. Exits 0 when it passes, 1 when it does not.
            """)

    @Flag(help: "One JSON object.") var json = false
    @OptionGroup var database: DatabaseOption

    func run() throws {
        guard !RegistryStores.isPostgres(database.location) else {
            throw ValidationError("check reads a SQLite file; pg_restore --list reads a PostgreSQL dump")
        }
        let check: SQLiteBackup.Check
        do {
            check = try SQLiteBackup.check(database.location)
        } catch {
            FileHandle.standardError.write(Data("bike-registry: \(error)\n".utf8))
            throw ExitCode(66)
        }
        try Self.report(check, of: database.location, json: json, done: "checked")
    }

    /// What the check found, as a line or JSON; exit 1 unless it passed.
    static func report(_ check: SQLiteBackup.Check, of path: String, json: Bool, done: String) throws {
        if json {
            try CommandOutput.printJSONLine([
                "file": path, "passed": check.passed, "integrity": check.integrity, "schema": check.schema,
                "missingMigrations": check.missing, "unknownMigrations": check.unknown, "bikes": check.bikes,
                "sightings": check.sightings, "stations": check.stations,
            ])
        } else if check.passed {
            print(
                "\(done) \(path): integrity ok, schema \(check.schema); \(check.stations) stations, \(check.bikes) bikes, \(check.sightings) sightings"
            )
        } else {
            var problems: [String] = []
            if check.integrity != ["ok"] {
                problems.append("integrity: " + check.integrity.prefix(5).joined(separator: "; "))
            }
            if !check.missing.isEmpty {
                problems.append("lacks this release's migrations \(check.missing.joined(separator: ", "))")
            }
            if !check.unknown.isEmpty {
                problems.append(
                    "has migrations this release does not know (\(check.unknown.joined(separator: ", "))): a newer release wrote it"
                )
            }
            FileHandle.standardError.write(
                Data("bike-registry: \(path) did not pass its check: \(problems.joined(separator: "; "))\n".utf8))
        }
        if !check.passed { throw ExitCode(1) }
    }
}
