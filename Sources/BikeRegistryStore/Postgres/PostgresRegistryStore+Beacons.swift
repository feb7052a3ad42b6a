public import BikeRegistryCore
public import Foundation
import Logging
import PostgresNIO

extension PostgresRegistryStore {
    public func issueBeacons(uuid: String, major: Int, firstMinor: Int, codeHashes: [String], now: Date)
        async throws -> [Int]
    {
        let uuid = uuid.uppercased()
        return try await transaction { [logger] connection in
            // Two operators issuing in one region at once would pick the same minors; the second waits here.
            try await connection.query("LOCK TABLE beacon IN SHARE ROW EXCLUSIVE MODE", logger: logger)
            var held = Set<Int>()
            for try await minor in try await connection.query(
                """
                SELECT minor FROM bike WHERE uuid = \(uuid) AND major = \(major)
                UNION SELECT minor FROM beacon WHERE uuid = \(uuid) AND major = \(major)
                """, logger: logger
            ).decode(Int.self) {
                held.insert(minor)
            }
            let minors = try BeaconMinors.free(from: firstMinor, count: codeHashes.count, held: held)
            for (minor, hash) in zip(minors, codeHashes) {
                try await connection.query(
                    """
                    INSERT INTO beacon (uuid, major, minor, codeHash, issuedAt)
                    VALUES (\(uuid), \(major), \(minor), \(hash), \(Self.seconds(now)))
                    """, logger: logger)
            }
            return minors
        }
    }

    public func importBeacons(_ beacons: [NewBeacon], now: Date) async throws {
        try await transaction { [logger] connection in
            for beacon in beacons {
                func exists(_ query: PostgresQuery) async throws -> Bool {
                    try await !connection.query(query, logger: logger).collect().isEmpty
                }
                let (uuid, major, minor) = (beacon.uuid, beacon.major, beacon.minor)
                if try await exists(
                    "SELECT 1 FROM beacon WHERE uuid = \(uuid) AND major = \(major) AND minor = \(minor)")
                {
                    throw RegistryStoreError("beacon \(BeaconMinors.name(beacon)) is provisioned already")
                }
                if try await exists("SELECT 1 FROM bike WHERE uuid = \(uuid) AND major = \(major) AND minor = \(minor)")
                {
                    throw RegistryStoreError("beacon \(BeaconMinors.name(beacon)) is a registered bike's")
                }
                let hash = beacon.codeHash
                if try await exists(
                    "SELECT 1 FROM beacon WHERE codeHash = \(hash) UNION SELECT 1 FROM rotatingBeacon WHERE codeHash = \(hash)"
                ) {
                    throw RegistryStoreError("beacon \(BeaconMinors.name(beacon)): its claim code is another beacon's")
                }
                try await connection.query(
                    """
                    INSERT INTO beacon (uuid, major, minor, codeHash, issuedAt)
                    VALUES (\(uuid), \(major), \(minor), \(beacon.codeHash), \(Self.seconds(now)))
                    """, logger: logger)
            }
        }
    }

    public func beacons() async throws -> [ProvisionedBeacon] {
        try await rows(
            """
            SELECT b.uuid, b.major, b.minor, b.issuedAt, b.revokedAt IS NOT NULL,
                   EXISTS (SELECT 1 FROM bike k WHERE k.uuid = b.uuid AND k.major = b.major AND k.minor = b.minor)
            FROM beacon b
            UNION ALL
            SELECT k.uuid, k.major, k.minor, NULL::DOUBLE PRECISION, FALSE, TRUE FROM bike k
            WHERE k.major >= 0
              AND NOT EXISTS (SELECT 1 FROM beacon b WHERE b.uuid = k.uuid AND b.major = k.major AND b.minor = k.minor)
            ORDER BY 1, 2, 3
            """
        ).map { row in
            let (uuid, major, minor, issuedAt, revoked, claimed) = try row.decode(
                (String, Int, Int, Double?, Bool, Bool).self)
            return ProvisionedBeacon(
                uuid: uuid, major: major, minor: minor, state: BeaconMinors.state(revoked: revoked, claimed: claimed),
                issuedAt: issuedAt.map(Self.date))
        }
    }

    public func revokeBeacon(uuid: String, major: Int, minor: Int, now: Date) async throws -> Bool {
        try await !rows(
            """
            UPDATE beacon SET revokedAt = \(Self.seconds(now))
            WHERE uuid = \(uuid.uppercased()) AND major = \(major) AND minor = \(minor) AND revokedAt IS NULL RETURNING 1
            """
        ).isEmpty
    }

    public func claim(codeHash: String, matching: BeaconMatch, bike: BikeDescription, now: Date) async throws
        -> RegisterOutcome
    {
        let registration = try await transaction { [logger] connection -> Registration? in
            let found = try await connection.query(
                "SELECT uuid, major, minor FROM beacon WHERE codeHash = \(codeHash) AND revokedAt IS NULL",
                logger: logger
            ).collect()
            guard let row = found.first else {
                return try await Self.claimRotating(
                    codeHash: codeHash, matching: matching, bike: bike, connection: connection, now: now,
                    logger: logger)
            }
            let (uuid, major, minor) = try row.decode((String, Int, Int).self)
            guard matching.accepts(uuid: uuid, major: major, minor: minor) else { return nil }
            let record = NewBikeRecord(
                NewBike(uuid: uuid, major: major, minor: minor, make: bike.make, model: bike.model, colour: bike.colour)
            )
            guard try await Self.insert(record, connection: connection, now: now, logger: logger) else { return nil }
            return record.registration(createdAt: now)
        }
        return registration.map(RegisterOutcome.registered) ?? .claimRefused
    }
}
