public import BikeRegistryCore
public import Foundation
import GRDB

extension SQLiteRegistryStore {
    public func issueBeacons(uuid: String, major: Int, firstMinor: Int, codeHashes: [String], now: Date)
        async throws -> [Int]
    {
        let uuid = uuid.uppercased()
        return try await write { db in
            let held = try Set(
                Int.fetchAll(
                    db,
                    sql: """
                        SELECT minor FROM bike WHERE uuid = ? AND major = ?
                        UNION SELECT minor FROM beacon WHERE uuid = ? AND major = ?
                        """,
                    arguments: [uuid, major, uuid, major]))
            let minors = try BeaconMinors.free(from: firstMinor, count: codeHashes.count, held: held)
            for (minor, hash) in zip(minors, codeHashes) {
                try db.execute(
                    sql: "INSERT INTO beacon (uuid, major, minor, codeHash, issuedAt) VALUES (?, ?, ?, ?, ?)",
                    arguments: [uuid, major, minor, hash, Self.seconds(now)])
            }
            return minors
        }
    }

    public func importBeacons(_ beacons: [NewBeacon], now: Date) async throws {
        try await write { db in
            for beacon in beacons {
                let identity: StatementArguments = [beacon.uuid, beacon.major, beacon.minor]
                if try Bool.fetchOne(
                    db, sql: "SELECT 1 FROM beacon WHERE uuid = ? AND major = ? AND minor = ?", arguments: identity)
                    == true
                {
                    throw RegistryStoreError("beacon \(BeaconMinors.name(beacon)) is provisioned already")
                }
                if try Bool.fetchOne(
                    db, sql: "SELECT 1 FROM bike WHERE uuid = ? AND major = ? AND minor = ?", arguments: identity)
                    == true
                {
                    throw RegistryStoreError("beacon \(BeaconMinors.name(beacon)) is a registered bike's")
                }
                if try Bool.fetchOne(
                    db,
                    sql:
                        "SELECT 1 FROM beacon WHERE codeHash = ? UNION SELECT 1 FROM rotatingBeacon WHERE codeHash = ?",
                    arguments: [beacon.codeHash, beacon.codeHash]) == true
                {
                    throw RegistryStoreError("beacon \(BeaconMinors.name(beacon)): its claim code is another beacon's")
                }
                try db.execute(
                    sql: "INSERT INTO beacon (uuid, major, minor, codeHash, issuedAt) VALUES (?, ?, ?, ?, ?)",
                    arguments: identity + [beacon.codeHash, Self.seconds(now)])
            }
        }
    }

    public func beacons() async throws -> [ProvisionedBeacon] {
        try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT b.uuid, b.major, b.minor, b.issuedAt, b.revokedAt IS NOT NULL AS revoked,
                           EXISTS (SELECT 1 FROM bike k WHERE k.uuid = b.uuid AND k.major = b.major AND k.minor = b.minor) AS claimed
                    FROM beacon b
                    UNION ALL
                    SELECT k.uuid, k.major, k.minor, NULL, 0, 1 FROM bike k
                    WHERE k.major >= 0
                      AND NOT EXISTS (SELECT 1 FROM beacon b WHERE b.uuid = k.uuid AND b.major = k.major AND b.minor = k.minor)
                    ORDER BY 1, 2, 3
                    """
            ).map { row in
                ProvisionedBeacon(
                    uuid: row[0], major: row[1], minor: row[2],
                    state: BeaconMinors.state(revoked: row[4], claimed: row[5]),
                    issuedAt: (row[3] as Double?).map(Self.date))
            }
        }
    }

    public func revokeBeacon(uuid: String, major: Int, minor: Int, now: Date) async throws -> Bool {
        try await write { db in
            try db.execute(
                sql: """
                    UPDATE beacon SET revokedAt = ? WHERE uuid = ? AND major = ? AND minor = ? AND revokedAt IS NULL
                    """,
                arguments: [Self.seconds(now), uuid.uppercased(), major, minor])
            return db.changesCount > 0
        }
    }

    public func claim(codeHash: String, matching: BeaconMatch, bike: BikeDescription, now: Date) async throws
        -> RegisterOutcome
    {
        let registration = try await write { db -> Registration? in
            if let beacon = try Row.fetchOne(
                db, sql: "SELECT uuid, major, minor FROM beacon WHERE codeHash = ? AND revokedAt IS NULL",
                arguments: [codeHash])
            {
                guard matching.accepts(uuid: beacon["uuid"], major: beacon["major"], minor: beacon["minor"]) else {
                    return nil
                }
                let record = NewBikeRecord(
                    NewBike(
                        uuid: beacon["uuid"], major: beacon["major"], minor: beacon["minor"], make: bike.make,
                        model: bike.model, colour: bike.colour))
                guard try Self.insert(record, db: db, now: now) else { return nil }
                return record.registration(createdAt: now)
            }
            return try Self.claimRotating(codeHash: codeHash, matching: matching, bike: bike, db: db, now: now)
        }
        return registration.map(RegisterOutcome.registered) ?? .claimRefused
    }
}
