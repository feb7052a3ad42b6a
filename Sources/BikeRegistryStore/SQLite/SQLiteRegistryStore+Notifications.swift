public import Foundation
import GRDB
import Synchronization

extension SQLiteRegistryStore {
    public func deliverDueNotification(
        now: Date, _ deliver: @escaping @Sendable (PendingNotification) async -> DeliveryOutcome
    ) async throws -> Bool {
        let held = delivering.withLock { $0 }
        let due = try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT notification.id, notification.bikeId, channel, target, payload, attempts, bike.webhookSecret, notification.createdAt
                    FROM notification JOIN bike ON bike.id = notification.bikeId
                    WHERE deliveredAt IS NULL AND abandonedAt IS NULL AND nextAttemptAt <= ?
                    ORDER BY nextAttemptAt, notification.createdAt LIMIT ?
                    """,
                arguments: [Self.seconds(now), held.count + 1]
            ).compactMap(PendingNotification.init(row:))
        }
        // The first due one that no other worker of this process holds, taken under the same lock that checks it,
        // and still due once held: the list above was read before the hold, so another worker may have delivered it
        // and let go of it since (it writes the outcome before it lets go, so a read after the hold sees that).
        for candidate in due {
            guard delivering.withLock({ $0.insert(candidate.id).inserted }) else { continue }
            defer { _ = delivering.withLock { $0.remove(candidate.id) } }
            guard try await stillDue(candidate.id, now: now) else { continue }
            let outcome = await deliver(candidate)
            try await pool.write { db in try Self.apply(outcome, to: candidate, db, now: Date()) }
            return true
        }
        return false
    }

    private func stillDue(_ id: String, now: Date) async throws -> Bool {
        try await pool.read { db in
            try Bool.fetchOne(
                db,
                sql:
                    "SELECT 1 FROM notification WHERE id = ? AND deliveredAt IS NULL AND abandonedAt IS NULL AND nextAttemptAt <= ?",
                arguments: [id, Self.seconds(now)]) ?? false
        }
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
        case .gone:
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

    public func nextNotificationDue() async throws -> Date? {
        try await pool.read { db in
            try Double.fetchOne(
                db, sql: "SELECT min(nextAttemptAt) FROM notification WHERE deliveredAt IS NULL AND abandonedAt IS NULL"
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
