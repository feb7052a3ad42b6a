import BikeRegistryCore
import Foundation

/// Where a message is owed, written once: one row for each confirmed target of the bike, its id the owed message's
/// on that channel (`MessageID`), kept once by the table's key (visit or report, type, channel) however often it is
/// decided. Sightings' messages are owed only by a bike that is missing, not paused and, its beacon rotating,
/// verified (`owing`); PostgreSQL's batch of sightings writes them with the same two pieces.
enum NotificationSQL {
    /// The columns a message is inserted with.
    static let insert: SQL = """
        INSERT INTO notification (id, bikeId, visitId, type, channel, target, payload, createdAt, nextAttemptAt)
        """

    /// A message's id on the target `t`: `MessageID.on(t.channel, owed:)`, in SQL.
    static func id(owed: SQL) -> SQL { "\(owed) || \(MessageID.separator) || t.channel" }

    /// The bike (alias `b`) owes a sighting's messages: missing, not paused, and verified when its beacon rotates
    /// (a rotating beacon's bike has major -1, `RotatingBeaconClaim`), `verified` being the SQL that says so.
    static func owing(verified: SQL) -> SQL { "b.missing AND NOT b.paused AND (b.major >= 0 OR \(verified))" }

    /// A report's notice (or a pause's), kept under `key`, on each of the bike's confirmed targets; none while the
    /// bike is paused when `unlessPaused`.
    static func owe(_ notice: ReportNotice, key: String, bikeId: String, unlessPaused: Bool, now: Date) -> SQL {
        """
        \(insert)
        SELECT \(id(owed: "\(notice.owedID(key: key))")), b.id, \(key), \(notice.type.rawValue), t.channel,
               t.target, \(notice.json()), \(now), \(now)
        FROM bike b JOIN notificationTarget t ON t.bikeId = b.id AND t.state = 'confirmed'
        WHERE b.id = \(bikeId) \(raw: unlessPaused ? "AND NOT b.paused" : "")
        ON CONFLICT DO NOTHING
        """
    }

    /// A sighting's message (`VisitNotifications.Candidate`) on each of the bike's confirmed targets, if the bike
    /// owes it: the rows written, one a target.
    static func owe(
        _ candidate: VisitNotifications.Candidate, visitId: String, bikeId: String, verified: Bool, now: Date
    ) -> SQL {
        """
        \(insert)
        SELECT \(id(owed: "\(candidate.id)")), b.id, \(visitId), \(candidate.type.rawValue), t.channel,
               t.target, \(candidate.payload), \(now), \(now)
        FROM bike b JOIN notificationTarget t ON t.bikeId = b.id AND t.state = 'confirmed'
        WHERE b.id = \(bikeId) AND \(owing(verified: "\(verified)"))
        ON CONFLICT DO NOTHING RETURNING id
        """
    }
}
