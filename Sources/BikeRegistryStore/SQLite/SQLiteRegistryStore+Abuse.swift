public import BikeRegistryCore
public import Foundation
import GRDB

extension SQLiteRegistryStore {
    public func lookupBeacon(uuid: String, major: Int, minor: Int) async throws -> BeaconLookup {
        try await pool.read { db in
            let missing = try Bool.fetchOne(
                db, sql: "SELECT missing FROM bike WHERE uuid = ? AND major = ? AND minor = ?",
                arguments: [RotatingBeaconClaim.stored(uuid, major: major), major, minor])
            return BeaconLookup(registered: missing != nil, missing: missing ?? false)
        }
    }

    public func reportAbuse(uuid: String, major: Int, minor: Int, message: String?, now: Date) async throws
        -> AbuseOutcome
    {
        let uuid = RotatingBeaconClaim.stored(uuid, major: major)
        return try await write { db in
            guard
                let bike = try Row.fetchOne(
                    db, sql: "SELECT * FROM bike WHERE uuid = ? AND major = ? AND minor = ?",
                    arguments: [uuid, major, minor]
                ).map(Bike.init(row:))
            else { return .noBike }
            let id = Secrets.newID(prefix: "abuse_")
            try db.execute(
                sql: """
                    INSERT INTO abuseReport (id, bikeId, uuid, major, minor, message, madeAt) VALUES (?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [id, bike.id, uuid, major, minor, message, Self.seconds(now)])
            guard !bike.paused else { return .recorded(id: id, paused: false) }
            try db.execute(sql: "UPDATE bike SET paused = TRUE WHERE id = ?", arguments: [bike.id])
            // What the bike still owed its owner goes no further either.
            try db.execute(
                sql: """
                    UPDATE notification SET abandonedAt = ?, lastError = 'paused: a finder reported the beacon'
                    WHERE bikeId = ? AND deliveredAt IS NULL AND abandonedAt IS NULL
                    """,
                arguments: [Self.seconds(now), bike.id])
            try Self.insert(
                ReportNotice(type: .paused, timestamp: now, bikeId: bike.id, lapsesAt: nil), key: id,
                webhook: bike.webhookURL, ntfy: bike.ntfyURL, email: bike.target(on: .email), now: now, db: db)
            return .recorded(id: id, paused: true)
        }
    }

    public func abuseReports() async throws -> [AbuseReport] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM abuseReport ORDER BY madeAt DESC, id").map { row in
                AbuseReport(
                    id: row["id"], bikeId: row["bikeId"], uuid: row["uuid"], major: row["major"], minor: row["minor"],
                    message: row["message"], madeAt: Self.date(row["madeAt"]),
                    resolvedAt: (row["resolvedAt"] as Double?).map(Self.date),
                    resolution: (row["resolution"] as String?).flatMap(AbuseReport.Resolution.init(rawValue:)))
            }
        }
    }

    public func resolveAbuse(id: String, _ resolution: AbuseReport.Resolution, now: Date) async throws -> Bool {
        try await write { db in
            guard
                let bikeId = try String.fetchOne(
                    db, sql: "SELECT bikeId FROM abuseReport WHERE id = ? AND resolvedAt IS NULL", arguments: [id])
            else { return false }
            try db.execute(
                sql: "UPDATE abuseReport SET resolvedAt = ?, resolution = ? WHERE bikeId = ? AND resolvedAt IS NULL",
                arguments: [Self.seconds(now), resolution.rawValue, bikeId])
            switch resolution {
            case .restored:
                try db.execute(sql: "UPDATE bike SET paused = FALSE WHERE id = ?", arguments: [bikeId])
            case .removed:
                guard
                    let bike = try Row.fetchOne(db, sql: "SELECT * FROM bike WHERE id = ?", arguments: [bikeId]).map(
                        Bike.init(row:))
                else { return true }
                try db.execute(sql: "DELETE FROM sighting WHERE bikeId = ?", arguments: [bikeId])
                try db.execute(sql: "DELETE FROM bike WHERE id = ?", arguments: [bikeId])
                try Self.forgetReports(of: bikeId, db: db, now: now)
                try db.execute(
                    sql: """
                        UPDATE beacon SET revokedAt = ? WHERE uuid = ? AND major = ? AND minor = ? AND revokedAt IS NULL
                        """,
                    arguments: [Self.seconds(now), bike.uuid, bike.major, bike.minor])
                // A rotating beacon is revoked too, and no longer holds the bike.
                try db.execute(
                    sql: "UPDATE rotatingBeacon SET bikeId = NULL, revokedAt = coalesce(revokedAt, ?) WHERE bikeId = ?",
                    arguments: [Self.seconds(now), bikeId])
                if bike.missing { try Self.bumpListVersion(db) }
            }
            return true
        }
    }
}
