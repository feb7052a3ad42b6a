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
            .write,
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
        return try rows.first.map { try PendingNotification(row: $0) }
    }

    public func nextNotificationDue(busyTargets: Set<String>) async throws -> Date? {
        try await rows(
            .read,
            """
            SELECT min(nextAttemptAt) FROM notification WHERE deliveredAt IS NULL AND abandonedAt IS NULL
                AND NOT (target = ANY(\(Array(busyTargets))))
            """
        ).first?.decode(Double?.self).map(Self.date)
    }
}

extension PendingNotification {
    /// A row of id, bikeId, channel, target, payload, attempts, webhookSecret, createdAt.
    init(row: PostgresRow) throws {
        let (id, bikeId, channel, target, payload, attempts, secret, createdAt) = try row.decode(
            (String, String, String, String, String, Int, String, Double).self)
        self.init(
            id: id, bikeId: bikeId, channel: NotificationChannel(channel), target: target, payload: payload,
            attempts: attempts,
            webhookSecret: secret,
            createdAt: PostgresRegistryStore.date(createdAt))
    }
}
