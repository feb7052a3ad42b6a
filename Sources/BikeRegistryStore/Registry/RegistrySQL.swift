import BikeRegistryCore
import Foundation

/// Statements more than one transaction runs, written once.
enum RegistrySQL {
    /// Every change to the missing list moves its version (its ETag) in the same transaction.
    static let bumpListVersion: SQL = "UPDATE listVersion SET version = version + 1"
    /// Every station added or revoked moves the stations' version, which servers reload them by.
    static let bumpStationsVersion: SQL = "UPDATE stationsVersion SET version = version + 1"

    /// A deleted bike's reports: an open one is withdrawn, and the owner's words are cleared; the times and outcomes
    /// stay, for the operator's figures.
    static func forgetReports(of bikeId: String, now: Date) -> [SQL] {
        [
            """
            UPDATE missingReport SET closedAt = \(now), outcome = \(MissingReport.Outcome.withdrawn.rawValue)
            WHERE bikeId = \(bikeId) AND closedAt IS NULL
            """,
            """
            UPDATE missingReport SET lastSeenAt = NULL, lastSeenPlace = NULL, policeReference = NULL, policeForce = NULL
            WHERE bikeId = \(bikeId)
            """,
        ]
    }

    /// Every message the bike still owes on `channel` (every channel when nil) goes no further, for `reason`.
    static func abandonOwed(bikeId: String, channel: NotificationChannel? = nil, reason: String, now: Date) -> SQL {
        """
        UPDATE notification SET abandonedAt = \(now), lastError = \(reason)
        WHERE bikeId = \(bikeId) \(channel.map { (channel) -> SQL in "AND channel = \(channel.rawValue)" } ?? "")
            AND deliveredAt IS NULL AND abandonedAt IS NULL
        """
    }
}

extension RegistrySchema.Dialect {
    /// The larger of two values: SQLite's two-argument `max`, PostgreSQL's `greatest`.
    var greatest: String { self == .sqlite ? "max" : "greatest" }
}
