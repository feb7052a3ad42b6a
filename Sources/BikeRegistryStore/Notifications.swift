public import Foundation
import GRDB

/// A message owed to an owner on one channel, with what delivering it needs.
public struct PendingNotification: Sendable, Equatable {
    public enum Channel: String, Sendable { case webhook, ntfy }

    /// The webhook-id: the same on every attempt.
    public var id: String
    public var bikeId: String
    public var channel: Channel
    public var target: String
    public var payload: String
    public var attempts: Int
    /// The bike's `whsec_` secret, for signing.
    public var webhookSecret: String
    public var createdAt: Date
}

extension RegistryDatabase {
    /// Notifications due by `now`, oldest first.
    public func dueNotifications(now: Date = Date(), limit: Int = 64) async throws -> [PendingNotification] {
        try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT notification.*, bike.webhookSecret FROM notification JOIN bike ON bike.id = notification.bikeId
                    WHERE deliveredAt IS NULL AND abandonedAt IS NULL AND nextAttemptAt <= ?
                    ORDER BY nextAttemptAt, createdAt LIMIT ?
                    """,
                arguments: [Self.seconds(now), limit]
            ).compactMap { row in
                guard let channel = PendingNotification.Channel(rawValue: row["channel"]) else { return nil }
                return PendingNotification(
                    id: row["id"], bikeId: row["bikeId"], channel: channel, target: row["target"], payload: row["payload"],
                    attempts: row["attempts"], webhookSecret: row["webhookSecret"], createdAt: Date(timeIntervalSince1970: row["createdAt"]))
            }
        }
    }

    /// When the next undelivered notification is due, if any is owed.
    public func nextNotificationDue() async throws -> Date? {
        try await pool.read { db in
            try Double.fetchOne(db, sql: "SELECT min(nextAttemptAt) FROM notification WHERE deliveredAt IS NULL AND abandonedAt IS NULL")
                .map(Date.init(timeIntervalSince1970:))
        }
    }

    public func markDelivered(_ id: String, now: Date = Date()) async throws {
        try await pool.write { db in
            try db.execute(sql: "UPDATE notification SET deliveredAt = ?, attempts = attempts + 1, lastError = NULL WHERE id = ?", arguments: [Self.seconds(now), id])
        }
    }

    public func retryLater(_ id: String, at: Date, error: String) async throws {
        try await pool.write { db in
            try db.execute(
                sql: "UPDATE notification SET nextAttemptAt = ?, attempts = attempts + 1, lastError = ? WHERE id = ?",
                arguments: [Self.seconds(at), error, id])
        }
    }

    public func abandon(_ id: String, error: String, now: Date = Date()) async throws {
        try await pool.write { db in
            try db.execute(
                sql: "UPDATE notification SET abandonedAt = ?, attempts = attempts + 1, lastError = ? WHERE id = ?",
                arguments: [Self.seconds(now), error, id])
        }
    }

    /// An endpoint said it is gone (410): the bike's target is cleared if it is still that one, and every message
    /// still owed to it is abandoned.
    public func disableTarget(bikeId: String, channel: PendingNotification.Channel, target: String, now: Date = Date()) async throws {
        try await pool.write { db in
            let column = channel == .webhook ? "webhookURL" : "ntfyURL"
            try db.execute(sql: "UPDATE bike SET \(column) = NULL WHERE id = ? AND \(column) = ?", arguments: [bikeId, target])
            try db.execute(
                sql: """
                    UPDATE notification SET abandonedAt = ?, lastError = 'the endpoint answered 410 Gone'
                    WHERE bikeId = ? AND channel = ? AND target = ? AND deliveredAt IS NULL AND abandonedAt IS NULL
                    """,
                arguments: [Self.seconds(now), bikeId, channel.rawValue, target])
        }
    }

    /// Counts by state, for the operator and the tests.
    public func notificationCounts() async throws -> (owed: Int, delivered: Int, abandoned: Int) {
        try await pool.read { db in
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT count(*) FILTER (WHERE deliveredAt IS NULL AND abandonedAt IS NULL) AS owed,
                           count(deliveredAt) AS delivered, count(abandonedAt) AS abandoned FROM notification
                    """)!
            return (row["owed"], row["delivered"], row["abandoned"])
        }
    }
}
