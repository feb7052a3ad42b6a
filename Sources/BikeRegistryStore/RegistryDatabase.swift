import Foundation
import GRDB

/// bike-registry's database: one SQLite file (WAL, synchronous=FULL) holding stations, bikes, sightings and the
/// notifications owed to owners. Every write that must not be lost (a sighting and the notifications it causes) is
/// one transaction, committed before the station is answered. The SQL is in plain view in each extension.
public final class RegistryDatabase: Sendable {
    public let path: String
    let pool: DatabasePool

    public init(path: String) throws(RegistryStoreError) {
        self.path = path
        do {
            var configuration = Configuration()
            configuration.prepareDatabase { db in
                // WAL lets the many readers (every station's refresh) run beside the one writer. synchronous=FULL
                // syncs the WAL at each commit, so a sighting answered 2xx survives a power cut, not only a crash.
                try db.execute(sql: "PRAGMA synchronous = FULL")
                try db.execute(sql: "PRAGMA foreign_keys = ON")
            }
            // A second process (an operator's `station add` beside `serve`) waits for the lock instead of failing.
            configuration.busyMode = .timeout(10)
            pool = try DatabasePool(path: path, configuration: configuration)
            try Self.migrator.migrate(pool)
        } catch {
            throw RegistryStoreError("cannot open the registry database \(path): \(error)")
        }
    }

    private static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            // Times are seconds since 1970 (REAL). Keys and tokens are stored as SHA-256 hex, never in clear;
            // the webhook secret is kept, since signing needs it.
            try db.execute(
                sql: """
                    CREATE TABLE station (
                        id INTEGER PRIMARY KEY,
                        name TEXT NOT NULL UNIQUE,
                        keyHash TEXT NOT NULL UNIQUE,
                        latitude REAL NOT NULL,
                        longitude REAL NOT NULL,
                        createdAt REAL NOT NULL,
                        revokedAt REAL,
                        lastRefreshAt REAL,
                        lastSightingAt REAL,
                        userAgent TEXT
                    );
                    CREATE TABLE bike (
                        id TEXT PRIMARY KEY,
                        uuid TEXT NOT NULL,
                        major INTEGER NOT NULL,
                        minor INTEGER NOT NULL,
                        make TEXT NOT NULL,
                        model TEXT NOT NULL,
                        colour TEXT NOT NULL,
                        missing INTEGER NOT NULL DEFAULT 0,
                        ownerTokenHash TEXT NOT NULL UNIQUE,
                        webhookSecret TEXT NOT NULL,
                        webhookURL TEXT,
                        ntfyURL TEXT,
                        createdAt REAL NOT NULL,
                        UNIQUE (uuid, major, minor)
                    );
                    CREATE INDEX bike_missing ON bike(missing);
                    -- bikeId is what the station sent: a sighting of an unknown bike is kept too.
                    CREATE TABLE sighting (
                        id TEXT PRIMARY KEY,
                        stationId INTEGER NOT NULL REFERENCES station(id),
                        bikeId TEXT NOT NULL,
                        kind TEXT NOT NULL,
                        seenAt REAL NOT NULL,
                        firstSeen REAL NOT NULL,
                        lastSeen REAL NOT NULL,
                        proximity TEXT NOT NULL,
                        rssi REAL,
                        count INTEGER NOT NULL,
                        visitId TEXT NOT NULL,
                        receivedAt REAL NOT NULL
                    );
                    CREATE INDEX sighting_bike ON sighting(bikeId, seenAt);
                    CREATE INDEX sighting_received ON sighting(receivedAt);
                    -- One row per message owed on one channel; its id is the webhook-id of every attempt.
                    CREATE TABLE notification (
                        id TEXT PRIMARY KEY,
                        bikeId TEXT NOT NULL REFERENCES bike(id) ON DELETE CASCADE,
                        visitId TEXT NOT NULL,
                        type TEXT NOT NULL,
                        channel TEXT NOT NULL,
                        target TEXT NOT NULL,
                        payload TEXT NOT NULL,
                        createdAt REAL NOT NULL,
                        attempts INTEGER NOT NULL DEFAULT 0,
                        nextAttemptAt REAL NOT NULL,
                        deliveredAt REAL,
                        abandonedAt REAL,
                        lastError TEXT,
                        UNIQUE (visitId, type, channel)
                    );
                    CREATE INDEX notification_due ON notification(nextAttemptAt) WHERE deliveredAt IS NULL AND abandonedAt IS NULL;
                    -- Bumped by every change to the missing list, in the same transaction: the list's ETag.
                    CREATE TABLE listVersion (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL);
                    INSERT INTO listVersion (id, version) VALUES (1, 1);
                    """)
        }
        return migrator
    }

    static func seconds(_ date: Date) -> Double { date.timeIntervalSince1970 }
}

/// What went wrong in the store, said for an operator.
public struct RegistryStoreError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
