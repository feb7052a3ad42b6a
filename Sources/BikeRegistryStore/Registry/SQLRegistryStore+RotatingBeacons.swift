import BikeRegistryCore
import Foundation

extension SQLRegistryStore {
    public func addRotatingBeacons(_ beacons: [NewRotatingBeacon], now: Date) async throws {
        try await database.transaction { connection in
            for beacon in beacons {
                if try await connection.exists("SELECT 1 FROM rotatingBeacon WHERE id = \(beacon.id)") {
                    throw RegistryStoreError("rotating beacon \(beacon.id) is provisioned already")
                }
                if try await connection.exists(BeaconSQL.codeTaken(beacon.codeHash)) {
                    throw RegistryStoreError("rotating beacon \(beacon.id): its claim code is another beacon's")
                }
                try await connection.execute(
                    """
                    INSERT INTO rotatingBeacon (id, uuid, period, sealedKey, codeHash, issuedAt)
                    VALUES (\(beacon.id), \(beacon.uuid), \(beacon.period), \(beacon.sealedKey), \(beacon.codeHash), \(now))
                    """)
            }
        }
    }

    public func rotatingBeacons() async throws -> [ProvisionedRotatingBeacon] {
        try await database.read(
            """
            SELECT id, uuid, period, issuedAt, revokedAt IS NOT NULL, bikeId IS NOT NULL
            FROM rotatingBeacon ORDER BY uuid, id
            """
        ).map { row in
            ProvisionedRotatingBeacon(
                id: try row.decode(0), uuid: try row.decode(1), period: try row.decode(2),
                state: BeaconMinors.state(revoked: try row.decode(4), claimed: try row.decode(5)),
                issuedAt: try row.decode(3))
        }
    }

    public func revokeRotatingBeacon(id: String, now: Date) async throws -> Bool {
        try await !database.write(
            "UPDATE rotatingBeacon SET revokedAt = \(now) WHERE id = \(id) AND revokedAt IS NULL RETURNING id"
        ).isEmpty
    }

    public func learnClockOffset(bikeId: String, offset: Int64) async throws -> Bool {
        try await database.transaction { connection in
            guard
                let moved = try await connection.row(
                    """
                    UPDATE rotatingBeacon SET clockOffset = \(offset) WHERE bikeId = \(bikeId) AND clockOffset <> \(offset)
                    RETURNING (SELECT missing FROM bike WHERE id = \(bikeId))
                    """)
            else { return false }
            if try moved.decode(0) as Bool? == true { try await connection.execute(RegistrySQL.bumpListVersion) }
            return true
        }
    }
}
