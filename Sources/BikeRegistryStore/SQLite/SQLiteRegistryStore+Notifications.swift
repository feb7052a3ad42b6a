public import BikeRegistryCore
public import Foundation
import GRDB

extension SQLiteRegistryStore {
    /// A read: the file's one server takes messages one at a time from its worker, which leaves out those it is
    /// delivering by their targets, so a message cannot be taken twice and `heldUntil` has nothing to guard.
    public func takeDueNotification(now: Date, busyTargets: Set<String>, heldUntil: Date) async throws
        -> PendingNotification?
    {
        let busy = Array(busyTargets)
        return try await pool.read { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT notification.id, notification.bikeId, channel, target, payload, attempts, bike.webhookSecret, notification.createdAt
                    FROM notification JOIN bike ON bike.id = notification.bikeId
                    WHERE deliveredAt IS NULL AND abandonedAt IS NULL AND nextAttemptAt <= ?
                        AND target NOT IN (\(Self.placeholders(busy.count)))
                    ORDER BY nextAttemptAt, notification.createdAt LIMIT 1
                    """,
                arguments: StatementArguments([Self.seconds(now)] as [any DatabaseValueConvertible] + busy)
            ).flatMap(PendingNotification.init(row:))
        }
    }

    public func recordAttempt(_ outcome: DeliveryOutcome, of notification: PendingNotification, now: Date)
        async throws
    {
        try await write { db in try Self.apply(outcome, to: notification, db, now: now) }
    }

    /// `?, ?, …`, `count` of them; `NULL` for none (`x NOT IN (NULL)` would be NULL, so none is written as a
    /// subquery with no rows).
    static func placeholders(_ count: Int) -> String {
        count == 0 ? "SELECT NULL WHERE 0" : Array(repeating: "?", count: count).joined(separator: ", ")
    }

    static func apply(_ outcome: DeliveryOutcome, to notification: PendingNotification, _ db: Database, now: Date)
        throws
    {
        switch outcome {
        case .delivered:
            try db.execute(
                sql: "UPDATE notification SET deliveredAt = ?, attempts = attempts + 1, lastError = NULL WHERE id = ?",
                arguments: [seconds(now), notification.id])
        case .retry(let at, let error):
            try db.execute(
                sql: "UPDATE notification SET nextAttemptAt = ?, attempts = attempts + 1, lastError = ? WHERE id = ?",
                arguments: [seconds(at), error, notification.id])
        case .abandon(let error):
            try db.execute(
                sql: "UPDATE notification SET abandonedAt = ?, attempts = attempts + 1, lastError = ? WHERE id = ?",
                arguments: [seconds(now), error, notification.id])
        case .addressFailing(let error):
            try db.execute(
                sql: "UPDATE bike SET emailState = 'failing', emailFailure = ? WHERE id = ? AND email = ?",
                arguments: [error, notification.bikeId, notification.target])
            try db.execute(
                sql: """
                    UPDATE notification SET abandonedAt = ?, attempts = attempts + CASE WHEN id = ? THEN 1 ELSE 0 END, lastError = ?
                    WHERE bikeId = ? AND channel = 'email' AND target = ? AND deliveredAt IS NULL AND abandonedAt IS NULL
                    """,
                arguments: [seconds(now), notification.id, error, notification.bikeId, notification.target])
        case .gone:
            // Only an HTTP endpoint answers 410.
            let column = notification.channel == .webhook ? "webhookURL" : "ntfyURL"
            try db.execute(
                sql: "UPDATE bike SET \(column) = NULL WHERE id = ? AND \(column) = ?",
                arguments: [notification.bikeId, notification.target])
            try db.execute(
                sql: """
                    UPDATE notification SET abandonedAt = ?, attempts = attempts + CASE WHEN id = ? THEN 1 ELSE 0 END, lastError = 'the endpoint answered 410 Gone'
                    WHERE bikeId = ? AND channel = ? AND target = ? AND deliveredAt IS NULL AND abandonedAt IS NULL
                    """,
                arguments: [
                    seconds(now), notification.id, notification.bikeId, notification.channel.rawValue,
                    notification.target,
                ])
        }
    }

    public func nextNotificationDue(busyTargets: Set<String>) async throws -> Date? {
        let busy = Array(busyTargets)
        return try await pool.read { db in
            try Double.fetchOne(
                db,
                sql: """
                    SELECT min(nextAttemptAt) FROM notification WHERE deliveredAt IS NULL AND abandonedAt IS NULL
                        AND target NOT IN (\(Self.placeholders(busy.count)))
                    """, arguments: StatementArguments(busy)
            )
            .map(Self.date)
        }
    }

    public func notificationCounts() async throws -> NotificationCounts {
        try await pool.read { db in
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT count(*) FILTER (WHERE deliveredAt IS NULL AND abandonedAt IS NULL), count(deliveredAt), count(abandonedAt)
                    FROM notification
                    """)!
            return NotificationCounts(owed: row[0], delivered: row[1], abandoned: row[2])
        }
    }
}

extension PendingNotification {
    /// A row of id, bikeId, channel, target, payload, attempts, webhookSecret, createdAt.
    init?(row: Row) {
        guard let channel = Channel(rawValue: row[2]) else { return nil }
        self.init(
            id: row[0], bikeId: row[1], channel: channel, target: row[3], payload: row[4], attempts: row[5],
            webhookSecret: row[6],
            createdAt: SQLiteRegistryStore.date(row[7]))
    }
}
