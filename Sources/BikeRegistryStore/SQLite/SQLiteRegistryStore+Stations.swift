public import BikeRegistryCore
public import Foundation
import GRDB

extension SQLiteRegistryStore {
    public func addStation(name: String, latitude: Double, longitude: Double, now: Date) async throws -> String {
        let new = try NewStationRecord(name: name, latitude: latitude, longitude: longitude)
        let added = try await write { db in
            try db.execute(
                sql:
                    "INSERT INTO station (name, keyHash, latitude, longitude, createdAt) VALUES (?, ?, ?, ?, ?) ON CONFLICT (name) DO NOTHING",
                arguments: [new.name, Secrets.hash(new.key), new.latitude, new.longitude, Self.seconds(now)])
            guard db.changesCount > 0 else { return false }
            try db.execute(sql: "UPDATE stationsVersion SET version = version + 1")
            return true
        }
        guard added else { throw new.exists }
        return new.key
    }

    public func stations() async throws -> [Station] {
        try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT id, name, keyHash, latitude, longitude, createdAt, revokedAt, lastRefreshAt, userAgent,
                        coalesce((SELECT max(receivedAt) FROM sighting WHERE sighting.stationId = station.id), lastSightingAt) AS lastSightingAt
                    FROM station ORDER BY name
                    """
            ).map(Station.init(row:))
        }
    }

    public func revokeStation(name: String, now: Date) async throws -> Bool {
        try await write { db in
            try db.execute(
                sql: "UPDATE station SET revokedAt = ? WHERE name = ? AND revokedAt IS NULL",
                arguments: [Self.seconds(now), name])
            guard db.changesCount > 0 else { return false }
            try db.execute(sql: "UPDATE stationsVersion SET version = version + 1")
            return true
        }
    }

    public func station(keyHash: String) async throws -> Station? {
        try await pool.read { db in
            try Row.fetchOne(
                db, sql: "SELECT * FROM station WHERE keyHash = ? AND revokedAt IS NULL", arguments: [keyHash]
            ).map(Station.init(row:))
        }
    }

    public func recordRefreshes(_ refreshes: [Int64: StationRefresh]) async throws {
        guard !refreshes.isEmpty else { return }
        try await write { db in
            for (id, refresh) in refreshes {
                try db.execute(
                    sql:
                        "UPDATE station SET lastRefreshAt = max(coalesce(lastRefreshAt, 0), ?), userAgent = coalesce(?, userAgent) WHERE id = ?",
                    arguments: [Self.seconds(refresh.at), refresh.userAgent, id])
            }
        }
    }

    public func stationsRefreshed(since date: Date) async throws -> Int {
        try await pool.read { db in
            try Int.fetchOne(
                db, sql: "SELECT count(*) FROM station WHERE revokedAt IS NULL AND lastRefreshAt >= ?",
                arguments: [Self.seconds(date)]) ?? 0
        }
    }
}

extension Station {
    init(row: Row) {
        self.init(
            id: row["id"], name: row["name"], keyHash: row["keyHash"], latitude: row["latitude"],
            longitude: row["longitude"],
            createdAt: SQLiteRegistryStore.date(row["createdAt"]),
            revokedAt: (row["revokedAt"] as Double?).map(SQLiteRegistryStore.date),
            lastRefreshAt: (row["lastRefreshAt"] as Double?).map(SQLiteRegistryStore.date),
            lastSightingAt: (row["lastSightingAt"] as Double?).map(SQLiteRegistryStore.date),
            userAgent: row["userAgent"])
    }
}
