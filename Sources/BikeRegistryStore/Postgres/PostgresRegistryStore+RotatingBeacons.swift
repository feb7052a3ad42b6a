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
}
