public import BikeRegistryCore
public import Foundation
import PostgresNIO

extension PostgresRegistryStore {
    static let stationColumns =
        "id, name, keyHash, latitude, longitude, createdAt, revokedAt, lastRefreshAt, lastSightingAt, userAgent"
    /// The same, the last sighting read from the station's sightings.
    static let listedStationColumns = """
        id, name, keyHash, latitude, longitude, createdAt, revokedAt, lastRefreshAt,
        coalesce((SELECT max(receivedAt) FROM sighting WHERE sighting.stationId = station.id), lastSightingAt), userAgent
        """

    public func addStation(name: String, latitude: Double, longitude: Double, now: Date) async throws -> String {
        let new = try NewStationRecord(name: name, latitude: latitude, longitude: longitude)
        let added = try await transaction { [logger] connection in
            let inserted = try await connection.query(
                """
                INSERT INTO station (name, keyHash, latitude, longitude, createdAt)
                VALUES (\(new.name), \(Secrets.hash(new.key)), \(new.latitude), \(new.longitude), \(Self.seconds(now)))
                ON CONFLICT (name) DO NOTHING RETURNING id
                """, logger: logger
            ).collect()
            guard !inserted.isEmpty else { return false }
            try await connection.query("UPDATE stationsVersion SET version = version + 1", logger: logger)
            return true
        }
        guard added else { throw new.exists }
        return new.key
    }

    public func stations() async throws -> [Station] {
        try await rows("SELECT \(unescaped: Self.listedStationColumns) FROM station ORDER BY name").map(
            Station.init(row:))
    }

    public func revokeStation(name: String, now: Date) async throws -> Bool {
        try await transaction { [logger] connection in
            let revoked = try await connection.query(
                "UPDATE station SET revokedAt = \(Self.seconds(now)) WHERE name = \(name) AND revokedAt IS NULL RETURNING id",
                logger: logger
            ).collect()
            guard !revoked.isEmpty else { return false }
            try await connection.query("UPDATE stationsVersion SET version = version + 1", logger: logger)
            return true
        }
    }

    public func station(keyHash: String) async throws -> Station? {
        try await rows(
            "SELECT \(unescaped: Self.stationColumns) FROM station WHERE keyHash = \(keyHash) AND revokedAt IS NULL"
        )
        .first.map(Station.init(row:))
    }

    public func recordRefreshes(_ refreshes: [Int64: StationRefresh]) async throws {
        guard !refreshes.isEmpty else { return }
        try await transaction { [logger] connection in
            for (id, refresh) in refreshes {
                try await connection.query(
                    """
                    UPDATE station SET lastRefreshAt = greatest(coalesce(lastRefreshAt, 0), \(Self.seconds(refresh.at))),
                        userAgent = coalesce(\(refresh.userAgent), userAgent)
                    WHERE id = \(id)
                    """, logger: logger)
            }
        }
    }

    public func stationsRefreshed(since date: Date) async throws -> Int {
        let counted = try await rows(
            "SELECT count(*) FROM station WHERE revokedAt IS NULL AND lastRefreshAt >= \(Self.seconds(date))")
        return try counted.first?.decode(Int.self) ?? 0
    }
}

extension Station {
    /// A row of `PostgresRegistryStore.stationColumns`.
    init(row: PostgresRow) throws {
        let (id, name, keyHash, latitude, longitude, createdAt, revokedAt, lastRefreshAt, lastSightingAt, userAgent) =
            try row.decode(
                (Int64, String, String, Double, Double, Double, Double?, Double?, Double?, String?).self)
        self.init(
            id: id, name: name, keyHash: keyHash, latitude: latitude, longitude: longitude,
            createdAt: PostgresRegistryStore.date(createdAt),
            revokedAt: revokedAt.map(PostgresRegistryStore.date),
            lastRefreshAt: lastRefreshAt.map(PostgresRegistryStore.date),
            lastSightingAt: lastSightingAt.map(PostgresRegistryStore.date), userAgent: userAgent)
    }
}
