import BikeRegistryCore
import Foundation

extension SQLRegistryStore {
    public func recordAttempt(_ outcome: NotificationOutcome, of notification: PendingNotification, now: Date)
        async throws
    {
        try await database.transaction { connection in
            for statement in DeliverySQL.apply(outcome, to: notification, now: now) {
                try await connection.execute(statement)
            }
        }
    }

    public func notificationCounts() async throws -> NotificationCounts {
        guard
            let row = try await database.readRow(
                """
                SELECT count(*) FILTER (WHERE deliveredAt IS NULL AND abandonedAt IS NULL), count(deliveredAt),
                       count(abandonedAt)
                FROM notification
                """)
        else { return NotificationCounts(owed: 0, delivered: 0, abandoned: 0) }
        return NotificationCounts(owed: try row.decode(0), delivered: try row.decode(1), abandoned: try row.decode(2))
    }
}

/// What one attempt's outcome writes.
enum DeliverySQL {
    static func apply(_ outcome: NotificationOutcome, to notification: PendingNotification, now: Date) -> [SQL] {
        let id = notification.id
        switch outcome {
        case .delivered:
            return [
                "UPDATE notification SET deliveredAt = \(now), attempts = attempts + 1, lastError = NULL WHERE id = \(id)"
            ]
        case .retry(let at, let error):
            return [
                "UPDATE notification SET nextAttemptAt = \(at), attempts = attempts + 1, lastError = \(error) WHERE id = \(id)"
            ]
        case .abandon(let error):
            return [
                "UPDATE notification SET abandonedAt = \(now), attempts = attempts + 1, lastError = \(error) WHERE id = \(id)"
            ]
        case .refused(let refusal, let error):
            // Everything still owed to that target on its channel goes no further; the attempt counts on this one.
            return [
                TargetSQL.refused(refusal, error: error, of: notification),
                """
                UPDATE notification SET abandonedAt = \(now), attempts = attempts + CASE WHEN id = \(id) THEN 1 ELSE 0 END,
                    lastError = \(error)
                WHERE bikeId = \(notification.bikeId) AND channel = \(notification.channel.rawValue)
                    AND target = \(notification.target) AND deliveredAt IS NULL AND abandonedAt IS NULL
                """,
            ]
        }
    }
}
