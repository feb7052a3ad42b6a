import BikeRegistryCore
import Foundation

extension SQLRegistryStore {
    public func addStation(name: String, latitude: Double, longitude: Double, now: Date) async throws -> String {
        let new = try NewStationRecord(name: name, latitude: latitude, longitude: longitude)
        let added = try await database.transaction { connection in
            guard
                try await connection.exists(
                    """
                    INSERT INTO station (name, keyHash, latitude, longitude, createdAt)
                    VALUES (\(new.name), \(Secrets.hash(new.key)), \(new.latitude), \(new.longitude), \(now))
                    ON CONFLICT (name) DO NOTHING RETURNING id
                    """)
            else { return false }
            try await connection.execute(RegistrySQL.bumpStationsVersion)
            return true
        }
        guard added else { throw new.exists }
        return new.key
    }

    public func stations() async throws -> [Station] {
        try await database.read("\(StationRows.select(listed: true)) ORDER BY name").map(StationRows.station)
    }

    public func revokeStation(name: String, now: Date) async throws -> Bool {
        try await database.transaction { connection in
            guard
                try await connection.exists(
                    "UPDATE station SET revokedAt = \(now) WHERE name = \(name) AND revokedAt IS NULL RETURNING id")
            else { return false }
            try await connection.execute(RegistrySQL.bumpStationsVersion)
            return true
        }
    }

    public func station(keyHash: String) async throws -> Station? {
        try await database.readRow("\(StationRows.select()) WHERE keyHash = \(keyHash) AND revokedAt IS NULL")
            .map(StationRows.station)
    }

    public func recordRefreshes(_ refreshes: [Int64: StationRefresh]) async throws {
        guard !refreshes.isEmpty else { return }
        try await database.transaction { connection in
            for (id, refresh) in refreshes {
                try await connection.execute(
                    """
                    UPDATE station SET lastRefreshAt = \(raw: connection.dialect.greatest)(coalesce(lastRefreshAt, 0), \(refresh.at)),
                        userAgent = coalesce(\(refresh.userAgent), userAgent)
                    WHERE id = \(id)
                    """)
            }
        }
    }

    public func stationsRefreshed(since date: Date) async throws -> Int {
        try await database.readRow(
            "SELECT count(*) FROM station WHERE revokedAt IS NULL AND lastRefreshAt >= \(date)"
        )?.decode(0) ?? 0
    }
}
