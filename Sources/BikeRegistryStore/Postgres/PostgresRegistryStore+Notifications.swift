public import BikeRegistryCore
public import Foundation
import Logging
import PostgresNIO

extension PostgresRegistryStore {
    /// The message is held by a lease: its `nextAttemptAt` moves to `heldUntil` in the statement that takes it, so
    /// another server's worker passes it by, and no connection is held while it is delivered (an endpoint that
    /// answers slowly would otherwise hold one of the pool's connections, which stations' requests need). If this
    /// process dies, the message is due again when the lease ends. `FOR UPDATE SKIP LOCKED` keeps two servers
    /// taking at the same moment from taking the same message.
    public func takeDueNotification(now: Date, busyTargets: Set<String>, heldUntil: Date) async throws
        -> PendingNotification?
    {
        let rows = try await rows(
            """
            UPDATE notification SET nextAttemptAt = \(Self.seconds(heldUntil))
            WHERE id = (
                SELECT id FROM notification
                WHERE deliveredAt IS NULL AND abandonedAt IS NULL AND nextAttemptAt <= \(Self.seconds(now))
                    AND NOT (target = ANY(\(Array(busyTargets))))
                ORDER BY nextAttemptAt, createdAt LIMIT 1
                FOR UPDATE SKIP LOCKED)
            RETURNING id, bikeId, channel, target, payload, attempts,
                (SELECT webhookSecret FROM bike WHERE bike.id = notification.bikeId), createdAt
            """)
        return try rows.first.flatMap { try PendingNotification(row: $0) }
    }

    public func recordAttempt(_ outcome: DeliveryOutcome, of notification: PendingNotification, now: Date)
        async throws
    {
        try await transaction { [logger] connection in
            try await Self.apply(outcome, to: notification, connection, now: now, logger: logger)
        }
    }

    static func apply(
        _ outcome: DeliveryOutcome, to notification: PendingNotification, _ connection: PostgresConnection, now: Date,
        logger: Logger
    ) async throws {
        let now = seconds(now)
        switch outcome {
        case .delivered:
            try await connection.query(
                "UPDATE notification SET deliveredAt = \(now), attempts = attempts + 1, lastError = NULL WHERE id = \(notification.id)",
                logger: logger)
        case .retry(let at, let error):
            try await connection.query(
                "UPDATE notification SET nextAttemptAt = \(seconds(at)), attempts = attempts + 1, lastError = \(error) WHERE id = \(notification.id)",
                logger: logger)
        case .abandon(let error):
            try await connection.query(
                "UPDATE notification SET abandonedAt = \(now), attempts = attempts + 1, lastError = \(error) WHERE id = \(notification.id)",
                logger: logger)
        case .addressFailing(let error):
            try await connection.query(
                """
                UPDATE bike SET emailState = 'failing', emailFailure = \(error)
                WHERE id = \(notification.bikeId) AND email = \(notification.target)
                """, logger: logger)
            try await connection.query(
                """
                UPDATE notification SET abandonedAt = \(now),
                    attempts = attempts + CASE WHEN id = \(notification.id) THEN 1 ELSE 0 END, lastError = \(error)
                WHERE bikeId = \(notification.bikeId) AND channel = 'email' AND target = \(notification.target)
                    AND deliveredAt IS NULL AND abandonedAt IS NULL
                """, logger: logger)
        case .gone:
            // Only an HTTP endpoint answers 410.
            let column = notification.channel == .webhook ? "webhookURL" : "ntfyURL"
            try await connection.query(
                "UPDATE bike SET \(unescaped: column) = NULL WHERE id = \(notification.bikeId) AND \(unescaped: column) = \(notification.target)",
                logger: logger)
            try await connection.query(
                """
                UPDATE notification SET abandonedAt = \(now), attempts = attempts + CASE WHEN id = \(notification.id) THEN 1 ELSE 0 END,
                    lastError = 'the endpoint answered 410 Gone'
                WHERE bikeId = \(notification.bikeId) AND channel = \(notification.channel.rawValue) AND target = \(notification.target)
                    AND deliveredAt IS NULL AND abandonedAt IS NULL
                """, logger: logger)
        }
    }

    public func nextNotificationDue(busyTargets: Set<String>) async throws -> Date? {
        try await rows(
            """
            SELECT min(nextAttemptAt) FROM notification WHERE deliveredAt IS NULL AND abandonedAt IS NULL
                AND NOT (target = ANY(\(Array(busyTargets))))
            """
        ).first?.decode(Double?.self).map(Self.date)
    }

    public func notificationCounts() async throws -> NotificationCounts {
        let row = try await rows(
            """
            SELECT count(*) FILTER (WHERE deliveredAt IS NULL AND abandonedAt IS NULL), count(deliveredAt), count(abandonedAt) FROM notification
            """)
        guard let counts = try row.first?.decode((Int, Int, Int).self) else {
            return NotificationCounts(owed: 0, delivered: 0, abandoned: 0)
        }
        return NotificationCounts(owed: counts.0, delivered: counts.1, abandoned: counts.2)
    }
}

extension PendingNotification {
    /// A row of id, bikeId, channel, target, payload, attempts, webhookSecret, createdAt.
    init?(row: PostgresRow) throws {
        let (id, bikeId, channel, target, payload, attempts, secret, createdAt) = try row.decode(
            (String, String, String, String, String, Int, String, Double).self)
        guard let channel = Channel(rawValue: channel) else { return nil }
        self.init(
            id: id, bikeId: bikeId, channel: channel, target: target, payload: payload, attempts: attempts,
            webhookSecret: secret,
            createdAt: PostgresRegistryStore.date(createdAt))
    }
}
