import BikeRegistryCore
import Foundation

extension SQLRegistryStore {
    public func lookupBeacon(uuid: String, major: Int, minor: Int) async throws -> BeaconLookup {
        let missing: Bool? = try await database.readRow(
            """
            SELECT missing FROM bike
            WHERE uuid = \(RotatingBeaconClaim.stored(uuid, major: major)) AND major = \(major) AND minor = \(minor)
            """
        )?.decode(0)
        return BeaconLookup(registered: missing != nil, missing: missing ?? false)
    }

    public func reportAbuse(uuid: String, major: Int, minor: Int, message: String?, now: Date) async throws
        -> AbuseOutcome
    {
        let uuid = RotatingBeaconClaim.stored(uuid, major: major)
        return try await database.transaction { connection in
            guard
                let bike = try await connection.bike(
                    where: "b.uuid = \(uuid) AND b.major = \(major) AND b.minor = \(minor)", lock: true)
            else { return .noBike }
            let id = Secrets.newID(prefix: "abuse_")
            let steps = AbuseStep.steps(reportId: id, bikeId: bike.id, paused: bike.paused, now: now)
            for step in steps {
                switch step {
                case .keep(let reportId):
                    try await connection.execute(
                        """
                        INSERT INTO abuseReport (id, bikeId, uuid, major, minor, message, madeAt)
                        VALUES (\(reportId), \(bike.id), \(uuid), \(major), \(minor), \(message), \(now))
                        """)
                case .pause(let notice):
                    try await connection.execute("UPDATE bike SET paused = TRUE WHERE id = \(bike.id)")
                    // What the bike still owed its owner goes no further either.
                    try await connection.execute(
                        RegistrySQL.abandonOwed(
                            bikeId: bike.id, reason: "paused: a finder reported the beacon", now: now))
                    try await connection.execute(
                        NotificationSQL.owe(notice, key: id, bikeId: bike.id, unlessPaused: false, now: now))
                }
            }
            return AbuseStep.outcome(of: steps, reportId: id)
        }
    }

    public func abuseReports() async throws -> [AbuseReport] {
        try await database.read(
            """
            SELECT id, bikeId, uuid, major, minor, message, madeAt, resolvedAt, resolution
            FROM abuseReport ORDER BY madeAt DESC, id
            """
        ).map { row in
            AbuseReport(
                id: try row.decode(0), bikeId: try row.decode(1), uuid: try row.decode(2), major: try row.decode(3),
                minor: try row.decode(4), message: try row.decode(5), madeAt: try row.decode(6),
                resolvedAt: try row.decode(7),
                resolution: (try row.decode(8) as String?).flatMap(AbuseReport.Resolution.init(rawValue:)))
        }
    }

    public func resolveAbuse(id: String, _ resolution: AbuseReport.Resolution, now: Date) async throws -> Bool {
        try await database.transaction { connection in
            guard
                let bikeId: String = try await connection.row(
                    "SELECT bikeId FROM abuseReport WHERE id = \(id) AND resolvedAt IS NULL \(SQL.forUpdate)"
                )?.decode(0)
            else { return false }
            try await connection.execute(
                """
                UPDATE abuseReport SET resolvedAt = \(now), resolution = \(resolution.rawValue)
                WHERE bikeId = \(bikeId) AND resolvedAt IS NULL
                """)
            switch resolution {
            case .restored:
                try await connection.execute("UPDATE bike SET paused = FALSE WHERE id = \(bikeId)")
            case .removed:
                guard
                    let bike = try await connection.row(
                        "DELETE FROM bike WHERE id = \(bikeId) RETURNING uuid, major, minor, missing")
                else { return true }
                let (uuid, major, minor): (String, Int, Int) = (
                    try bike.decode(0), try bike.decode(1), try bike.decode(2)
                )
                try await connection.execute(
                    """
                    UPDATE beacon SET revokedAt = \(now)
                    WHERE uuid = \(uuid) AND major = \(major) AND minor = \(minor) AND revokedAt IS NULL
                    """)
                // A rotating beacon is revoked too, and no longer holds the bike.
                try await connection.execute(
                    "UPDATE rotatingBeacon SET bikeId = NULL, revokedAt = coalesce(revokedAt, \(now)) WHERE bikeId = \(bikeId)"
                )
                try await BikeSQL.forget(bikeId: bikeId, wasMissing: try bike.decode(3), now: now, connection)
            }
            return true
        }
    }
}
