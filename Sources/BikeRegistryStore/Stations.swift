public import Foundation
import GRDB

/// A café's station as the operator added it.
public struct Station: Sendable, Equatable {
    public var id: Int64
    public var name: String
    public var latitude: Double
    public var longitude: Double
    public var createdAt: Date
    public var revokedAt: Date?
    public var lastRefreshAt: Date?
    public var lastSightingAt: Date?
    /// The station's User-Agent at its last refresh (beacond/VERSION).
    public var userAgent: String?

    init(row: Row) {
        id = row["id"]
        name = row["name"]
        latitude = row["latitude"]
        longitude = row["longitude"]
        createdAt = Date(timeIntervalSince1970: row["createdAt"])
        revokedAt = (row["revokedAt"] as Double?).map(Date.init(timeIntervalSince1970:))
        lastRefreshAt = (row["lastRefreshAt"] as Double?).map(Date.init(timeIntervalSince1970:))
        lastSightingAt = (row["lastSightingAt"] as Double?).map(Date.init(timeIntervalSince1970:))
        userAgent = row["userAgent"]
    }
}

extension RegistryDatabase {
    /// Adds a station and returns its key, which is stored only as a hash.
    public func addStation(name: String, latitude: Double, longitude: Double, now: Date = Date()) throws(RegistryStoreError) -> String {
        guard !name.isEmpty, name.count <= 200 else { throw RegistryStoreError("a station's name is 1 to 200 characters") }
        guard (-90...90).contains(latitude), (-180...180).contains(longitude) else {
            throw RegistryStoreError("latitude is -90 to 90 and longitude -180 to 180")
        }
        let key = Secrets.newToken(prefix: "bks_")
        do {
            try pool.write { db in
                if try Bool.fetchOne(db, sql: "SELECT 1 FROM station WHERE name = ?", arguments: [name]) == true {
                    throw RegistryStoreError("a station named \(name) exists already (revoked ones keep their name)")
                }
                try db.execute(
                    sql: "INSERT INTO station (name, keyHash, latitude, longitude, createdAt) VALUES (?, ?, ?, ?, ?)",
                    arguments: [name, Secrets.hash(key), latitude, longitude, Self.seconds(now)])
            }
        } catch let error as RegistryStoreError {
            throw error
        } catch {
            throw RegistryStoreError("cannot add the station: \(error)")
        }
        return key
    }

    public func stations() throws -> [Station] {
        try pool.read { db in try Row.fetchAll(db, sql: "SELECT * FROM station ORDER BY name").map(Station.init(row:)) }
    }

    /// Revokes the station's key; its sightings stay. False when no station has that name.
    public func revokeStation(name: String, now: Date = Date()) throws -> Bool {
        try pool.write { db in
            try db.execute(sql: "UPDATE station SET revokedAt = ? WHERE name = ? AND revokedAt IS NULL", arguments: [Self.seconds(now), name])
            return db.changesCount > 0
        }
    }

    /// The station whose key this is, unless revoked.
    public func station(key: String) async throws -> Station? {
        let hash = Secrets.hash(key)
        return try await pool.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM station WHERE keyHash = ? AND revokedAt IS NULL", arguments: [hash]).map(Station.init(row:))
        }
    }

    /// Notes each station's latest refresh (many at once: the server gathers them rather than write per request).
    public func recordRefreshes(_ refreshes: [Int64: (at: Date, userAgent: String?)]) async throws {
        guard !refreshes.isEmpty else { return }
        try await pool.write { db in
            for (id, refresh) in refreshes {
                try db.execute(
                    sql: "UPDATE station SET lastRefreshAt = max(coalesce(lastRefreshAt, 0), ?), userAgent = coalesce(?, userAgent) WHERE id = ?",
                    arguments: [Self.seconds(refresh.at), refresh.userAgent, id])
            }
        }
    }

    /// How many stations refreshed since `date`: the stations that were listening.
    public func stationsRefreshed(since date: Date) async throws -> Int {
        try await pool.read { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM station WHERE revokedAt IS NULL AND lastRefreshAt >= ?", arguments: [Self.seconds(date)]) ?? 0
        }
    }
}
