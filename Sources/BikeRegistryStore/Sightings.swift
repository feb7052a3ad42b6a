public import Foundation
import GRDB

/// A sighting as a station posts it (docs/registry-api.yaml, Sighting), the fields the registry keeps.
public struct SightingReport: Sendable, Equatable {
    public enum Kind: String, Sendable { case enter, update, exit }

    public var sightingId: String
    public var bikeId: String
    public var kind: Kind
    public var date: Date
    public var firstSeen: Date
    public var lastSeen: Date
    public var proximity: String
    public var rssi: Double?
    public var count: Int

    public init(sightingId: String, bikeId: String, kind: Kind, date: Date, firstSeen: Date, lastSeen: Date, proximity: String, rssi: Double?, count: Int) {
        self.sightingId = sightingId
        self.bikeId = bikeId
        self.kind = kind
        self.date = date
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
        self.proximity = proximity
        self.rssi = rssi
        self.count = count
    }
}

public enum RecordOutcome: Sendable, Equatable {
    /// Stored; `notifications` messages are now owed to the owner (0 for a bike not missing, or unknown).
    case recorded(notifications: Int)
    /// This sightingId is stored already: nothing changed.
    case repeated
}

/// One sighting as its owner sees it.
public struct OwnerSighting: Sendable, Equatable {
    public var kind: String
    public var seenAt: Date
    public var firstSeen: Date
    public var lastSeen: Date
    public var stationName: String
    public var latitude: Double
    public var longitude: Double
    public var proximity: String
    public var rssi: Double?
    public var visitId: String
}

extension RegistryDatabase {
    /// Stores the sighting and, for a missing bike, the notifications its visit now owes, in one transaction: once
    /// this returns, the station may be told 2xx. A repeat of a stored sightingId changes nothing.
    ///
    /// A visit is the station, the bike and the visit's first-seen time. Its first sighting to arrive (the enter,
    /// or an update or exit when the enter was lost) owes a `bike.seen`; its exit a `bike.left`. Each is owed once per
    /// channel (the table's unique key), however often or in whatever order the visit's sightings come.
    public func record(_ sighting: SightingReport, from station: Station, now: Date = Date()) async throws -> RecordOutcome {
        let visitId = Secrets.derivedID(
            prefix: "visit_", [String(station.id), sighting.bikeId, String(Int64((sighting.firstSeen.timeIntervalSince1970 * 1000).rounded()))])
        return try await pool.write { db in
            if try Bool.fetchOne(db, sql: "SELECT 1 FROM sighting WHERE id = ?", arguments: [sighting.sightingId]) == true { return .repeated }
            try db.execute(
                sql: """
                    INSERT INTO sighting (id, stationId, bikeId, kind, seenAt, firstSeen, lastSeen, proximity, rssi, count, visitId, receivedAt)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    sighting.sightingId, station.id, sighting.bikeId, sighting.kind.rawValue, Self.seconds(sighting.date),
                    Self.seconds(sighting.firstSeen), Self.seconds(sighting.lastSeen), sighting.proximity, sighting.rssi, sighting.count,
                    visitId, Self.seconds(now),
                ])
            try db.execute(sql: "UPDATE station SET lastSightingAt = ? WHERE id = ?", arguments: [Self.seconds(now), station.id])
            guard let bike = try Row.fetchOne(db, sql: "SELECT * FROM bike WHERE id = ?", arguments: [sighting.bikeId]).map(Bike.init(row:)),
                bike.missing
            else { return .recorded(notifications: 0) }
            var owed = [(type: NotificationPayload.Kind.seen, at: sighting.firstSeen)]
            if sighting.kind == .exit { owed.append((.left, sighting.lastSeen)) }
            let targets = [("webhook", bike.webhookURL), ("ntfy", bike.ntfyURL)].compactMap { channel, url in url.map { (channel, $0) } }
            var inserted = 0
            for (type, at) in owed {
                let payload = NotificationPayload(
                    type: type, timestamp: now, bikeId: bike.id, station: station, seenAt: at, proximity: sighting.proximity, visitId: visitId)
                for (channel, target) in targets {
                    try db.execute(
                        sql: """
                            INSERT OR IGNORE INTO notification (id, bikeId, visitId, type, channel, target, payload, createdAt, nextAttemptAt)
                            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                            """,
                        arguments: [
                            Secrets.derivedID(prefix: "msg_", [visitId, type.rawValue, channel]), bike.id, visitId, type.rawValue, channel, target,
                            try payload.json(), Self.seconds(now), Self.seconds(now),
                        ])
                    inserted += db.changesCount
                }
            }
            return .recorded(notifications: inserted)
        }
    }

    /// The bike's sightings, newest first (at most `limit`), with each station's name and place.
    public func sightings(bikeId: String, limit: Int = 1000) async throws -> [OwnerSighting] {
        try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT sighting.*, station.name AS stationName, station.latitude, station.longitude
                    FROM sighting JOIN station ON station.id = sighting.stationId
                    WHERE bikeId = ? ORDER BY seenAt DESC, sighting.rowid DESC LIMIT ?
                    """,
                arguments: [bikeId, limit]
            ).map { row in
                OwnerSighting(
                    kind: row["kind"], seenAt: Date(timeIntervalSince1970: row["seenAt"]), firstSeen: Date(timeIntervalSince1970: row["firstSeen"]),
                    lastSeen: Date(timeIntervalSince1970: row["lastSeen"]), stationName: row["stationName"], latitude: row["latitude"],
                    longitude: row["longitude"], proximity: row["proximity"], rssi: row["rssi"], visitId: row["visitId"])
            }
        }
    }

    /// Deletes sightings received before `cutoff`, and notifications finished before it; returns the sightings deleted.
    @discardableResult
    public func purge(before cutoff: Date) async throws -> Int {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM sighting WHERE receivedAt < ?", arguments: [Self.seconds(cutoff)])
            let sightings = db.changesCount
            try db.execute(
                sql: "DELETE FROM notification WHERE coalesce(deliveredAt, abandonedAt) < ?", arguments: [Self.seconds(cutoff)])
            return sightings
        }
    }
}

extension RegistryDatabase {
    /// Whether a sighting with this id is stored.
    public func hasSighting(_ id: String) async throws -> Bool {
        try await pool.read { db in try Bool.fetchOne(db, sql: "SELECT 1 FROM sighting WHERE id = ?", arguments: [id.lowercased()]) ?? false }
    }
}
