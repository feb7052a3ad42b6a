public import Foundation
import Logging
import PostgresNIO

extension PostgresRegistryStore {
    /// The message is held by a row lock (`FOR UPDATE SKIP LOCKED`) in a transaction that lasts while it is delivered:
    /// another server's worker skips it, and if this process dies its connection closes, the lock goes with it, and
    /// the message is due again at once (no lease to wait out). A delivery takes at most its HTTP timeout, so a
    /// worker holds as many connections as it delivers at once.
    public func deliverDueNotification(
        now: Date, _ deliver: @escaping @Sendable (PendingNotification) async -> DeliveryOutcome
    ) async throws -> Bool {
        // The deadline covers the delivery too, which its own HTTP timeout (15 s) ends first.
        try await transaction(within: .seconds(30)) { [logger] connection in
            let due = try await connection.query(
                """
                SELECT notification.id, notification.bikeId, channel, target, payload, attempts, bike.webhookSecret, notification.createdAt
                FROM notification JOIN bike ON bike.id = notification.bikeId
                WHERE deliveredAt IS NULL AND abandonedAt IS NULL AND nextAttemptAt <= \(Self.seconds(now))
                ORDER BY nextAttemptAt, notification.createdAt LIMIT 1
                FOR UPDATE OF notification SKIP LOCKED
                """, logger: logger
            ).collect()
            guard let row = due.first, let notification = try PendingNotification(row: row) else { return false }
            let outcome = await deliver(notification)
            try await Self.apply(outcome, to: notification, connection, now: Date(), logger: logger)
            return true
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
        case .gone:
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

    public func nextNotificationDue() async throws -> Date? {
        try await rows("SELECT min(nextAttemptAt) FROM notification WHERE deliveredAt IS NULL AND abandonedAt IS NULL")
            .first?.decode(Double?.self).map(Self.date)
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
