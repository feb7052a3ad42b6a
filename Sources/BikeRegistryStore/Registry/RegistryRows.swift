import BikeRegistryCore
import Foundation

/// The registry's rows as both stores read them: each a column list and the one way to read its rows.
enum BikeRows {
    /// A bike and each of its targets, a row a target (one row, its target columns NULL, when it has none).
    static func select(where condition: SQL, lock: Bool = false) -> SQL {
        """
        SELECT b.id, b.uuid, b.major, b.minor, b.make, b.model, b.colour, b.missing, b.createdAt, b.webhookSecret,
               b.paused, t.channel, t.target, t.state, t.failure, t.unsubscribeKey
        FROM bike b LEFT JOIN notificationTarget t ON t.bikeId = b.id
        WHERE \(condition) ORDER BY b.id \(lock ? SQL(sqlite: "", postgres: "FOR UPDATE OF b") : "")
        """
    }

    /// The bikes `select` gave, each with its targets.
    static func bikes(_ rows: [SQLRow]) throws -> [Bike] {
        var bikes: [Bike] = []
        for row in rows {
            let id: String = try row.decode(0)
            if bikes.last?.id != id {
                bikes.append(
                    Bike(
                        id: id, uuid: try row.decode(1), major: try row.decode(2), minor: try row.decode(3),
                        make: try row.decode(4), model: try row.decode(5), colour: try row.decode(6),
                        missing: try row.decode(7), createdAt: try row.decode(8), webhookSecret: try row.decode(9),
                        paused: try row.decode(10)))
            }
            guard let channel: String = try row.decode(11) else { continue }
            let state: String = try row.decode(13)
            bikes[bikes.count - 1].targets.append(
                NotificationTarget(
                    channel: NotificationChannel(channel), address: try row.decode(12),
                    state: NotificationTarget.State(rawValue: state) ?? .failing, failure: try row.decode(14),
                    unsubscribeKey: try row.decode(15)))
        }
        return bikes
    }
}

extension SQLConnection {
    /// The bike `condition` names (of the alias `b`), with its targets; `lock` holds its row to the transaction's
    /// end on PostgreSQL (SQLite's transaction holds the file).
    func bike(where condition: SQL, lock: Bool = false) async throws -> Bike? {
        try BikeRows.bikes(try await rows(BikeRows.select(where: condition, lock: lock))).first
    }
}

enum StationRows {
    /// `lastSightingAt` is the station's, or read from its sightings (`listed`).
    static func select(listed: Bool = false) -> SQL {
        """
        SELECT id, name, keyHash, latitude, longitude, createdAt, revokedAt, lastRefreshAt,
               \(raw: listed ? "coalesce((SELECT max(receivedAt) FROM sighting WHERE sighting.stationId = station.id), lastSightingAt)" : "lastSightingAt"),
               userAgent
        FROM station
        """
    }

    static func station(_ row: SQLRow) throws -> Station {
        Station(
            id: try row.decode(0), name: try row.decode(1), keyHash: try row.decode(2), latitude: try row.decode(3),
            longitude: try row.decode(4), createdAt: try row.decode(5), revokedAt: try row.decode(6),
            lastRefreshAt: try row.decode(7), lastSightingAt: try row.decode(8), userAgent: try row.decode(9))
    }
}

enum ReportRows {
    static let select: SQL = """
        SELECT id, bikeId, madeAt, renewedAt, lapsesAt, lastSeenAt, lastSeenPlace, policeReference, policeForce,
               reminderSentAt, closedAt, outcome
        FROM missingReport
        """

    static func report(_ row: SQLRow) throws -> MissingReport {
        MissingReport(
            id: try row.decode(0), bikeId: try row.decode(1), madeAt: try row.decode(2), renewedAt: try row.decode(3),
            lapsesAt: try row.decode(4),
            details: MissingReportDetails(
                lastSeenAt: try row.decode(5), lastSeenPlace: try row.decode(6), policeReference: try row.decode(7),
                policeForce: try row.decode(8)),
            reminderSentAt: try row.decode(9), closedAt: try row.decode(10),
            outcome: (try row.decode(11) as String?).flatMap(MissingReport.Outcome.init(rawValue:)))
    }
}

enum NotificationRows {
    /// A message as a delivery needs it: `notification`'s columns and its bike's webhook secret (the alias `bike`).
    static let columns: SQL = """
        notification.id, notification.bikeId, notification.channel, notification.target, notification.payload,
        notification.attempts, bike.webhookSecret, notification.createdAt
        """

    static func notification(_ row: SQLRow) throws -> PendingNotification {
        PendingNotification(
            id: try row.decode(0), bikeId: try row.decode(1), channel: NotificationChannel(try row.decode(2)),
            target: try row.decode(3), payload: try row.decode(4), attempts: try row.decode(5),
            webhookSecret: try row.decode(6), createdAt: try row.decode(7))
    }
}
