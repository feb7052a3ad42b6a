public import BikeRegistryCore
public import Foundation
import GRDB

extension SQLiteRegistryStore {
    public func addRotatingBeacons(_ beacons: [NewRotatingBeacon], now: Date) async throws {
        try await write { db in
            for beacon in beacons {
                if try Bool.fetchOne(db, sql: "SELECT 1 FROM rotatingBeacon WHERE id = ?", arguments: [beacon.id])
                    == true
                {
                    throw RegistryStoreError("rotating beacon \(beacon.id) is provisioned already")
                }
                if try Bool.fetchOne(
                    db,
                    sql:
                        "SELECT 1 FROM beacon WHERE codeHash = ? UNION SELECT 1 FROM rotatingBeacon WHERE codeHash = ?",
                    arguments: [beacon.codeHash, beacon.codeHash]) == true
                {
                    throw RegistryStoreError("rotating beacon \(beacon.id): its claim code is another beacon's")
                }
                try db.execute(
                    sql: """
                        INSERT INTO rotatingBeacon (id, uuid, period, sealedKey, codeHash, issuedAt)
                        VALUES (?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [
                        beacon.id, beacon.uuid, beacon.period, beacon.sealedKey, beacon.codeHash, Self.seconds(now),
                    ])
            }
        }
    }

    public func rotatingBeacons() async throws -> [ProvisionedRotatingBeacon] {
        try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT id, uuid, period, issuedAt, revokedAt IS NOT NULL, bikeId IS NOT NULL
                    FROM rotatingBeacon ORDER BY uuid, id
                    """
            ).map { row in
                ProvisionedRotatingBeacon(
                    id: row[0], uuid: row[1], period: row[2],
                    state: BeaconMinors.state(revoked: row[4], claimed: row[5]), issuedAt: Self.date(row[3]))
            }
        }
    }

    public func revokeRotatingBeacon(id: String, now: Date) async throws -> Bool {
        try await write { db in
            try db.execute(
                sql: "UPDATE rotatingBeacon SET revokedAt = ? WHERE id = ? AND revokedAt IS NULL",
                arguments: [Self.seconds(now), id])
            return db.changesCount > 0
        }
    }

    /// `claim` of a rotating beacon: its bike holds the beacon's id (`RotatingBeaconClaim`), and the beacon its bike.
    static func claimRotating(codeHash: String, matching: BeaconMatch, bike: BikeDescription, db: Database, now: Date)
        throws -> Registration?
    {
        guard
            let beacon = try Row.fetchOne(
                db,
                sql: "SELECT id, uuid FROM rotatingBeacon WHERE codeHash = ? AND revokedAt IS NULL AND bikeId IS NULL",
                arguments: [codeHash]),
            RotatingBeaconClaim.accepts(matching, uuid: beacon["uuid"])
        else { return nil }
        let record = NewBikeRecord(
            NewBike(
                uuid: beacon["id"], major: RotatingBeaconClaim.major, minor: RotatingBeaconClaim.minor,
                make: bike.make, model: bike.model, colour: bike.colour))
        guard try insert(record, db: db, now: now) else { return nil }
        try db.execute(
            sql: "UPDATE rotatingBeacon SET bikeId = ? WHERE id = ?", arguments: [record.id, beacon["id"] as String])
        return record.registration(createdAt: now)
    }

    public func learnClockOffset(bikeId: String, offset: Int64) async throws -> Bool {
        try await write { db in
            try db.execute(
                sql: "UPDATE rotatingBeacon SET clockOffset = ? WHERE bikeId = ? AND clockOffset <> ?",
                arguments: [offset, bikeId, offset])
            guard db.changesCount > 0 else { return false }
            if try Bool.fetchOne(db, sql: "SELECT missing FROM bike WHERE id = ?", arguments: [bikeId]) == true {
                try Self.bumpListVersion(db)
            }
            return true
        }
    }
}
