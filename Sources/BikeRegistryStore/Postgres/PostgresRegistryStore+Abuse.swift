public import BikeRegistryCore
public import Foundation
import Logging
import PostgresNIO

extension PostgresRegistryStore {
    public func lookupBeacon(uuid: String, major: Int, minor: Int) async throws -> BeaconLookup {
        let found = try await rows(
            "SELECT missing FROM bike WHERE uuid = \(RotatingBeaconClaim.stored(uuid, major: major)) AND major = \(major) AND minor = \(minor)"
        )
        let missing = try found.first?.decode(Bool.self)
        return BeaconLookup(registered: missing != nil, missing: missing ?? false)
    }

    public func reportAbuse(uuid: String, major: Int, minor: Int, message: String?, now: Date) async throws
        -> AbuseOutcome
    {
        let uuid = RotatingBeaconClaim.stored(uuid, major: major)
        return try await transaction { [logger] connection in
            guard
                let bike = try await connection.query(
                    """
                    SELECT \(unescaped: Self.bikeColumns) FROM bike
                    WHERE uuid = \(uuid) AND major = \(major) AND minor = \(minor) FOR UPDATE
                    """, logger: logger
                ).collect().first.map(Bike.init(row:))
            else { return .noBike }
            let id = Secrets.newID(prefix: "abuse_")
            try await connection.query(
                """
                INSERT INTO abuseReport (id, bikeId, uuid, major, minor, message, madeAt)
                VALUES (\(id), \(bike.id), \(uuid), \(major), \(minor), \(message), \(Self.seconds(now)))
                """, logger: logger)
            guard !bike.paused else { return .recorded(id: id, paused: false) }
            try await connection.query("UPDATE bike SET paused = TRUE WHERE id = \(bike.id)", logger: logger)
            // What the bike still owed its owner goes no further either.
            try await connection.query(
                """
                UPDATE notification SET abandonedAt = \(Self.seconds(now)), lastError = 'paused: a finder reported the beacon'
                WHERE bikeId = \(bike.id) AND deliveredAt IS NULL AND abandonedAt IS NULL
                """, logger: logger)
            try await Self.insert(
                ReportNotice(type: .paused, timestamp: now, bikeId: bike.id, lapsesAt: nil), key: id,
                webhook: bike.webhookURL, ntfy: bike.ntfyURL, email: bike.target(on: .email), now: now,
                connection: connection, logger: logger)
            return .recorded(id: id, paused: true)
        }
    }

    public func abuseReports() async throws -> [AbuseReport] {
        try await rows(
            """
            SELECT id, bikeId, uuid, major, minor, message, madeAt, resolvedAt, resolution
            FROM abuseReport ORDER BY madeAt DESC, id
            """
        ).map { row in
            let (id, bikeId, uuid, major, minor, message, madeAt, resolvedAt, resolution) = try row.decode(
                (String, String, String, Int, Int, String?, Double, Double?, String?).self)
            return AbuseReport(
                id: id, bikeId: bikeId, uuid: uuid, major: major, minor: minor, message: message,
                madeAt: Self.date(madeAt), resolvedAt: resolvedAt.map(Self.date),
                resolution: resolution.flatMap(AbuseReport.Resolution.init(rawValue:)))
        }
    }

    public func resolveAbuse(id: String, _ resolution: AbuseReport.Resolution, now: Date) async throws -> Bool {
        try await transaction { [logger] connection in
            guard
                let bikeId = try await connection.query(
                    "SELECT bikeId FROM abuseReport WHERE id = \(id) AND resolvedAt IS NULL FOR UPDATE", logger: logger
                ).collect().first?.decode(String.self)
            else { return false }
            try await connection.query(
                """
                UPDATE abuseReport SET resolvedAt = \(Self.seconds(now)), resolution = \(resolution.rawValue)
                WHERE bikeId = \(bikeId) AND resolvedAt IS NULL
                """, logger: logger)
            switch resolution {
            case .restored:
                try await connection.query("UPDATE bike SET paused = FALSE WHERE id = \(bikeId)", logger: logger)
            case .removed:
                guard
                    let bike = try await connection.query(
                        "DELETE FROM bike WHERE id = \(bikeId) RETURNING \(unescaped: Self.bikeColumns)", logger: logger
                    ).collect().first.map(Bike.init(row:))
                else { return true }
                try await connection.query("DELETE FROM sighting WHERE bikeId = \(bikeId)", logger: logger)
                try await Self.forgetReports(of: bikeId, connection: connection, now: now, logger: logger)
                try await connection.query(
                    """
                    UPDATE beacon SET revokedAt = \(Self.seconds(now))
                    WHERE uuid = \(bike.uuid) AND major = \(bike.major) AND minor = \(bike.minor) AND revokedAt IS NULL
                    """, logger: logger)
                // A rotating beacon is revoked too, and no longer holds the bike.
                try await connection.query(
                    """
                    UPDATE rotatingBeacon SET bikeId = NULL, revokedAt = coalesce(revokedAt, \(Self.seconds(now)))
                    WHERE bikeId = \(bikeId)
                    """, logger: logger)
                if bike.missing { try await Self.bumpListVersion(connection, logger: logger) }
            }
            return true
        }
    }
}
