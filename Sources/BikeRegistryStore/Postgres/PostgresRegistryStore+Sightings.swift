public import Foundation
import Logging
import PostgresNIO

extension PostgresRegistryStore {
    public func record(_ sighting: SightingReport, from station: Station, now: Date) async throws -> RecordOutcome {
        let visit = VisitNotifications(sighting: sighting, stationId: station.id)
        let received = Self.seconds(now)
        return try await transaction { [logger] connection in
            // A repeat posted at the same moment waits here for the first to commit, then inserts nothing.
            let inserted = try await connection.query(
                """
                INSERT INTO sighting (id, stationId, bikeId, kind, seenAt, firstSeen, lastSeen, proximity, rssi, count, visitId, receivedAt)
                VALUES (\(sighting.sightingId), \(station.id), \(sighting.bikeId), \(sighting.kind.rawValue), \(Self.seconds(sighting.date)),
                        \(Self.seconds(sighting.firstSeen)), \(Self.seconds(sighting.lastSeen)), \(sighting.proximity), \(sighting.rssi),
                        \(sighting.count), \(visit.visitId), \(received))
                ON CONFLICT (id) DO NOTHING RETURNING id
                """, logger: logger
            ).collect()
            guard !inserted.isEmpty else { return .repeated }
            try await connection.query("UPDATE station SET lastSightingAt = \(received) WHERE id = \(station.id)", logger: logger)
            let found = try await connection.query(
                "SELECT \(unescaped: Self.bikeColumns) FROM bike WHERE id = \(sighting.bikeId) AND missing", logger: logger
            ).collect()
            guard let bike = try found.first.map(Bike.init(row:)) else { return .recorded(notifications: 0) }
            var owed = 0
            for row in try visit.owed(by: sighting, bike: bike, station: station, now: now) {
                let kept = try await connection.query(
                    """
                    INSERT INTO notification (id, bikeId, visitId, type, channel, target, payload, createdAt, nextAttemptAt)
                    VALUES (\(row.id), \(bike.id), \(visit.visitId), \(row.type.rawValue), \(row.channel.rawValue), \(row.target), \(row.payload),
                            \(received), \(received))
                    ON CONFLICT DO NOTHING RETURNING id
                    """, logger: logger
                ).collect()
                owed += kept.count
            }
            return .recorded(notifications: owed)
        }
    }

    public func sightings(bikeId: String, limit: Int) async throws -> [OwnerSighting] {
        let rows = try await rows(
            """
            SELECT sighting.kind, sighting.seenAt, sighting.firstSeen, sighting.lastSeen, station.name, station.latitude, station.longitude,
                   sighting.proximity, sighting.rssi, sighting.visitId
            FROM sighting JOIN station ON station.id = sighting.stationId
            WHERE bikeId = \(bikeId) ORDER BY seenAt DESC, receivedAt DESC, sighting.id DESC LIMIT \(limit)
            """)
        return try rows.map { row in
            let (kind, seenAt, firstSeen, lastSeen, name, latitude, longitude, proximity, rssi, visitId) = try row.decode(
                (String, Double, Double, Double, String, Double, Double, String, Double?, String).self)
            return OwnerSighting(
                kind: kind, seenAt: Self.date(seenAt), firstSeen: Self.date(firstSeen), lastSeen: Self.date(lastSeen),
                station: .init(name: name, latitude: latitude, longitude: longitude), proximity: proximity, rssi: rssi, visitId: visitId)
        }
    }

    public func hasSighting(_ id: String) async throws -> Bool {
        try await !rows("SELECT 1 FROM sighting WHERE id = \(id.lowercased())").isEmpty
    }

    public func purge(before cutoff: Date) async throws -> Int {
        let cutoff = Self.seconds(cutoff)
        return try await transaction { [logger] connection in
            let deleted = try await connection.query("DELETE FROM sighting WHERE receivedAt < \(cutoff) RETURNING 1", logger: logger).collect()
            try await connection.query("DELETE FROM notification WHERE coalesce(deliveredAt, abandonedAt) < \(cutoff)", logger: logger)
            return deleted.count
        }
    }
}
