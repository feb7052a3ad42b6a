public import BikeRegistryCore
public import Foundation
import Logging
import PostgresNIO

extension PostgresRegistryStore {
    public func addRotatingBeacons(_ beacons: [NewRotatingBeacon], now: Date) async throws {
        try await transaction { [logger] connection in
            func exists(_ query: PostgresQuery) async throws -> Bool {
                try await !connection.query(query, logger: logger).collect().isEmpty
            }
            for beacon in beacons {
                if try await exists("SELECT 1 FROM rotatingBeacon WHERE id = \(beacon.id)") {
                    throw RegistryStoreError("rotating beacon \(beacon.id) is provisioned already")
                }
                let hash = beacon.codeHash
                if try await exists(
                    "SELECT 1 FROM beacon WHERE codeHash = \(hash) UNION SELECT 1 FROM rotatingBeacon WHERE codeHash = \(hash)"
                ) {
                    throw RegistryStoreError("rotating beacon \(beacon.id): its claim code is another beacon's")
                }
                try await connection.query(
                    """
                    INSERT INTO rotatingBeacon (id, uuid, period, sealedKey, codeHash, issuedAt)
                    VALUES (\(beacon.id), \(beacon.uuid), \(beacon.period), \(beacon.sealedKey), \(hash),
                            \(Self.seconds(now)))
                    """, logger: logger)
            }
        }
    }

    public func rotatingBeacons() async throws -> [ProvisionedRotatingBeacon] {
        try await rows(
            """
            SELECT id, uuid, period, issuedAt, revokedAt IS NOT NULL, bikeId IS NOT NULL
            FROM rotatingBeacon ORDER BY uuid, id
            """
        ).map { row in
            let (id, uuid, period, issuedAt, revoked, claimed) = try row.decode(
                (String, String, Int, Double, Bool, Bool).self)
            return ProvisionedRotatingBeacon(
                id: id, uuid: uuid, period: period, state: BeaconMinors.state(revoked: revoked, claimed: claimed),
                issuedAt: Self.date(issuedAt))
        }
    }

    public func revokeRotatingBeacon(id: String, now: Date) async throws -> Bool {
        try await !rows(
            "UPDATE rotatingBeacon SET revokedAt = \(Self.seconds(now)) WHERE id = \(id) AND revokedAt IS NULL RETURNING 1"
        ).isEmpty
    }

    /// `claim` of a rotating beacon: its bike holds the beacon's id (`RotatingBeaconClaim`), and the beacon its bike.
    /// The beacon's row is locked first, so two claims of one code register one bike.
    static func claimRotating(
        codeHash: String, matching: BeaconMatch, bike: BikeDescription, connection: PostgresConnection, now: Date,
        logger: Logger
    ) async throws -> Registration? {
        let found = try await connection.query(
            """
            SELECT id, uuid FROM rotatingBeacon WHERE codeHash = \(codeHash) AND revokedAt IS NULL AND bikeId IS NULL
            FOR UPDATE
            """, logger: logger
        ).collect()
        guard let row = found.first else { return nil }
        let (id, uuid) = try row.decode((String, String).self)
        guard RotatingBeaconClaim.accepts(matching, uuid: uuid) else { return nil }
        let record = NewBikeRecord(
            NewBike(
                uuid: id, major: RotatingBeaconClaim.major, minor: RotatingBeaconClaim.minor, make: bike.make,
                model: bike.model, colour: bike.colour))
        guard try await insert(record, connection: connection, now: now, logger: logger) else { return nil }
        try await connection.query(
            "UPDATE rotatingBeacon SET bikeId = \(record.id) WHERE id = \(id)", logger: logger)
        return record.registration(createdAt: now)
    }

    public func learnClockOffset(bikeId: String, offset: Int64) async throws -> Bool {
        try await transaction { [logger] connection in
            let moved = try await connection.query(
                """
                UPDATE rotatingBeacon SET clockOffset = \(offset) WHERE bikeId = \(bikeId) AND clockOffset <> \(offset)
                RETURNING (SELECT missing FROM bike WHERE id = \(bikeId))
                """, logger: logger
            ).collect()
            guard let row = moved.first else { return false }
            if try row.decode(Bool?.self) == true { try await Self.bumpListVersion(connection, logger: logger) }
            return true
        }
    }
}
