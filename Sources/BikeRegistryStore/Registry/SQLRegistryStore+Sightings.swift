import BikeRegistryCore
import Foundation

extension SQLRegistryStore {
    public func sightings(bikeId: String, limit: Int) async throws -> [OwnerSighting] {
        try await database.read(
            """
            SELECT sighting.kind, sighting.seenAt, sighting.firstSeen, sighting.lastSeen, station.name, station.latitude,
                   station.longitude, sighting.proximity, sighting.rssi, sighting.visitId, sighting.timesAsReceived
            FROM sighting JOIN station ON station.id = sighting.stationId
            WHERE bikeId = \(bikeId) ORDER BY seenAt DESC, receivedAt DESC, sighting.id DESC LIMIT \(limit)
            """
        ).map { row in
            OwnerSighting(
                kind: try row.decode(0), seenAt: try row.decode(1), firstSeen: try row.decode(2),
                lastSeen: try row.decode(3),
                station: .init(name: try row.decode(4), latitude: try row.decode(5), longitude: try row.decode(6)),
                proximity: try row.decode(7), rssi: try row.decode(8), visitId: try row.decode(9),
                timesAsReceived: try row.decode(10))
        }
    }

    /// Sightings of a rotating beacon's bike (major -1, `RotatingBeaconClaim`) that the server did not verify,
    /// counted through the bike: nothing is looked up when a sighting is written.
    public func unverifiedSightings() async throws -> Int {
        try await database.readRow(
            """
            SELECT count(*) FROM bike JOIN sighting ON sighting.bikeId = bike.id
            WHERE bike.major < 0 AND NOT sighting.verifiedRotating
            """
        )?.decode(0) ?? 0
    }

    public func hasSighting(_ id: String) async throws -> Bool {
        try await reads.exists("SELECT 1 FROM sighting WHERE id = \(id.lowercased())")
    }

    public func purge(before cutoff: Date) async throws -> Int {
        try await database.transaction { connection in
            let deleted = try await connection.rows("DELETE FROM sighting WHERE receivedAt < \(cutoff) RETURNING id")
            try await connection.execute(
                "DELETE FROM notification WHERE coalesce(deliveredAt, abandonedAt) < \(cutoff)")
            return deleted.count
        }
    }
}
