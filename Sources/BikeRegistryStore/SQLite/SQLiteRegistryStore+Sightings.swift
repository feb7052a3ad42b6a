public import BikeRegistryCore
public import Foundation
import GRDB

extension SQLiteRegistryStore {
    public func record(_ sent: SightingReport, from station: Station, now: Date) async throws -> RecordOutcome {
        let sighting = StationClockCheck.checked(sent, receivedAt: now)
        let visit = VisitNotifications(sighting: sighting, stationId: station.id)
        return try await write { db in
            try db.execute(
                sql: """
                    INSERT INTO sighting (id, stationId, bikeId, kind, seenAt, firstSeen, lastSeen, proximity, rssi, count, visitId, receivedAt, timesAsReceived, verifiedRotating)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING
                    """,
                arguments: [
                    sighting.sightingId, station.id, sighting.bikeId, sighting.kind.rawValue,
                    Self.seconds(sighting.date),
                    Self.seconds(sighting.firstSeen), Self.seconds(sighting.lastSeen), sighting.proximity,
                    sighting.rssi, sighting.count,
                    visit.visitId, Self.seconds(now), sighting.timesAsReceived, sighting.verifiedRotating,
                ])
            guard db.changesCount > 0 else { return .repeated }
            guard
                let bike = try Row.fetchOne(db, sql: "SELECT * FROM bike WHERE id = ?", arguments: [sighting.bikeId])
                    .map(Bike.init(row:)),
                bike.missing, !bike.paused
            else { return .recorded(notifications: 0) }
            var inserted = 0
            for row in try visit.owed(by: sighting, bike: bike, station: station, now: now) {
                try db.execute(
                    sql: """
                        INSERT INTO notification (id, bikeId, visitId, type, channel, target, payload, createdAt, nextAttemptAt)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING
                        """,
                    arguments: [
                        row.id, bike.id, visit.visitId, row.type.rawValue, row.channel.rawValue, row.target,
                        row.payload, Self.seconds(now),
                        Self.seconds(now),
                    ])
                inserted += db.changesCount
            }
            return .recorded(notifications: inserted)
        }
    }

    public func sightings(bikeId: String, limit: Int) async throws -> [OwnerSighting] {
        try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT sighting.kind, sighting.seenAt, sighting.firstSeen, sighting.lastSeen, station.name, station.latitude,
                           station.longitude, sighting.proximity, sighting.rssi, sighting.visitId, sighting.timesAsReceived
                    FROM sighting JOIN station ON station.id = sighting.stationId
                    WHERE bikeId = ? ORDER BY seenAt DESC, receivedAt DESC, sighting.id DESC LIMIT ?
                    """,
                arguments: [bikeId, limit]
            ).map { row in
                OwnerSighting(
                    kind: row[0], seenAt: Self.date(row[1]), firstSeen: Self.date(row[2]), lastSeen: Self.date(row[3]),
                    station: .init(name: row[4], latitude: row[5], longitude: row[6]), proximity: row[7], rssi: row[8],
                    visitId: row[9], timesAsReceived: row[10])
            }
        }
    }

    public func unverifiedSightings() async throws -> Int {
        try await pool.read { db in try Int.fetchOne(db, sql: RegistrySchema.unverifiedSightings) ?? 0 }
    }

    public func hasSighting(_ id: String) async throws -> Bool {
        try await pool.read { db in
            try Bool.fetchOne(db, sql: "SELECT 1 FROM sighting WHERE id = ?", arguments: [id.lowercased()]) ?? false
        }
    }

    public func purge(before cutoff: Date) async throws -> Int {
        try await write { db in
            try db.execute(sql: "DELETE FROM sighting WHERE receivedAt < ?", arguments: [Self.seconds(cutoff)])
            let sightings = db.changesCount
            try db.execute(
                sql: "DELETE FROM notification WHERE coalesce(deliveredAt, abandonedAt) < ?",
                arguments: [Self.seconds(cutoff)])
            return sightings
        }
    }
}
