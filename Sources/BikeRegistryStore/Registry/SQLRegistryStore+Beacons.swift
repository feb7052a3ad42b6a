import BikeRegistryCore
import Foundation

extension SQLRegistryStore {
    public func issueBeacons(uuid: String, major: Int, firstMinor: Int, codeHashes: [String], now: Date)
        async throws -> [Int]
    {
        let uuid = uuid.uppercased()
        return try await database.transaction { connection in
            // Two operators issuing in one region at once would pick the same minors; the second waits here
            // (PostgreSQL; SQLite's one writer orders them already).
            try await connection.execute(.postgresOnly("LOCK TABLE beacon IN SHARE ROW EXCLUSIVE MODE"))
            let held: [Int] = try await connection.rows(
                """
                SELECT minor FROM bike WHERE uuid = \(uuid) AND major = \(major)
                UNION SELECT minor FROM beacon WHERE uuid = \(uuid) AND major = \(major)
                """
            ).map { try $0.decode(0) }
            let minors = try BeaconMinors.free(from: firstMinor, count: codeHashes.count, held: Set(held))
            for (minor, hash) in zip(minors, codeHashes) {
                try await connection.execute(
                    BeaconSQL.insert(uuid: uuid, major: major, minor: minor, codeHash: hash, now: now))
            }
            return minors
        }
    }

    public func importBeacons(_ beacons: [NewBeacon], now: Date) async throws {
        try await database.transaction { connection in
            for beacon in beacons {
                let (uuid, major, minor) = (beacon.uuid, beacon.major, beacon.minor)
                if try await connection.exists(
                    "SELECT 1 FROM beacon WHERE uuid = \(uuid) AND major = \(major) AND minor = \(minor)")
                {
                    throw RegistryStoreError("beacon \(BeaconMinors.name(beacon)) is provisioned already")
                }
                if try await connection.exists(
                    "SELECT 1 FROM bike WHERE uuid = \(uuid) AND major = \(major) AND minor = \(minor)")
                {
                    throw RegistryStoreError("beacon \(BeaconMinors.name(beacon)) is a registered bike's")
                }
                if try await connection.exists(BeaconSQL.codeTaken(beacon.codeHash)) {
                    throw RegistryStoreError("beacon \(BeaconMinors.name(beacon)): its claim code is another beacon's")
                }
                try await connection.execute(
                    BeaconSQL.insert(uuid: uuid, major: major, minor: minor, codeHash: beacon.codeHash, now: now))
            }
        }
    }

    public func beacons() async throws -> [ProvisionedBeacon] {
        try await database.read(
            """
            SELECT b.uuid, b.major, b.minor, b.issuedAt, b.revokedAt IS NOT NULL,
                   EXISTS (SELECT 1 FROM bike k WHERE k.uuid = b.uuid AND k.major = b.major AND k.minor = b.minor)
            FROM beacon b
            UNION ALL
            SELECT k.uuid, k.major, k.minor, CAST(NULL AS DOUBLE PRECISION), FALSE, TRUE FROM bike k
            WHERE k.major >= 0
              AND NOT EXISTS (SELECT 1 FROM beacon b WHERE b.uuid = k.uuid AND b.major = k.major AND b.minor = k.minor)
            ORDER BY 1, 2, 3
            """
        ).map { row in
            ProvisionedBeacon(
                uuid: try row.decode(0), major: try row.decode(1), minor: try row.decode(2),
                state: BeaconMinors.state(revoked: try row.decode(4), claimed: try row.decode(5)),
                issuedAt: try row.decode(3))
        }
    }

    public func revokeBeacon(uuid: String, major: Int, minor: Int, now: Date) async throws -> Bool {
        try await !database.write(
            """
            UPDATE beacon SET revokedAt = \(now)
            WHERE uuid = \(uuid.uppercased()) AND major = \(major) AND minor = \(minor) AND revokedAt IS NULL
            RETURNING uuid
            """
        ).isEmpty
    }

    public func claim(codeHash: String, matching: BeaconMatch, bike: BikeDescription, now: Date) async throws
        -> RegisterOutcome
    {
        let registration = try await database.transaction { connection -> Registration? in
            guard
                let row = try await connection.row(
                    "SELECT uuid, major, minor FROM beacon WHERE codeHash = \(codeHash) AND revokedAt IS NULL")
            else {
                return try await BeaconSQL.claimRotating(codeHash, matching: matching, bike: bike, now: now, connection)
            }
            let (uuid, major, minor): (String, Int, Int) = (try row.decode(0), try row.decode(1), try row.decode(2))
            guard matching.accepts(uuid: uuid, major: major, minor: minor) else { return nil }
            let record = NewBikeRecord(
                NewBike(uuid: uuid, major: major, minor: minor, make: bike.make, model: bike.model, colour: bike.colour)
            )
            guard try await BikeSQL.insert(record, now: now, connection) else { return nil }
            return record.registration(createdAt: now)
        }
        return registration.map(RegisterOutcome.registered) ?? .claimRefused
    }
}

/// Provisioned beacons' statements that more than one transaction runs.
enum BeaconSQL {
    static func insert(uuid: String, major: Int, minor: Int, codeHash: String, now: Date) -> SQL {
        "INSERT INTO beacon (uuid, major, minor, codeHash, issuedAt) VALUES (\(uuid), \(major), \(minor), \(codeHash), \(now))"
    }

    /// Whether a beacon of either kind has this code: a code is unique across both tables.
    static func codeTaken(_ hash: String) -> SQL {
        "SELECT 1 FROM beacon WHERE codeHash = \(hash) UNION SELECT 1 FROM rotatingBeacon WHERE codeHash = \(hash)"
    }

    /// `claim` of a rotating beacon: its bike holds the beacon's id (`RotatingBeaconClaim`), and the beacon its bike.
    /// The beacon's row is locked first (PostgreSQL), so two claims of one code register one bike.
    static func claimRotating(
        _ codeHash: String, matching: BeaconMatch, bike: BikeDescription, now: Date, _ connection: any SQLConnection
    ) async throws -> Registration? {
        guard
            let row = try await connection.row(
                """
                SELECT id, uuid FROM rotatingBeacon WHERE codeHash = \(codeHash) AND revokedAt IS NULL AND bikeId IS NULL
                \(SQL.forUpdate)
                """)
        else { return nil }
        let (id, uuid): (String, String) = (try row.decode(0), try row.decode(1))
        guard RotatingBeaconClaim.accepts(matching, uuid: uuid) else { return nil }
        let record = NewBikeRecord(
            NewBike(
                uuid: id, major: RotatingBeaconClaim.major, minor: RotatingBeaconClaim.minor, make: bike.make,
                model: bike.model, colour: bike.colour))
        guard try await BikeSQL.insert(record, now: now, connection) else { return nil }
        try await connection.execute("UPDATE rotatingBeacon SET bikeId = \(record.id) WHERE id = \(id)")
        return record.registration(createdAt: now)
    }
}
