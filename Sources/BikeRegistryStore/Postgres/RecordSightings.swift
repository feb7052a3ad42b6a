import BikeRegistryCore
import Foundation
import PostgresNIO

/// `record`'s one statement, for a batch of sightings posted at the same moment (`SightingBatches`): each inserted
/// unless its id is stored and, only if it was, the messages its visit owes (`VisitNotifications.candidates`) on
/// each of its bike's confirmed targets, judged against the bike in the same statement by the rule SQLite's record
/// writes too (`NotificationSQL.owing`: missing, not paused, verified if its beacon rotates). One statement is atomic
/// on its own: a sighting and its messages are stored together or not at all. A repeat posted at the same moment
/// waits for the first to commit, then inserts nothing. Prepared, and the same text for any batch (columns as
/// arrays), so each connection parses and plans it once.
struct RecordSightings: PostgresPreparedStatement {
    static let sql = """
        WITH posted AS (
            SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::float8[], $6::float8[], $7::float8[],
                                 $8::text[], $9::float8[], $10::bigint[], $11::text[], $17::boolean[], $18::boolean[])
                AS posted (id, stationId, bikeId, kind, seenAt, firstSeen, lastSeen, proximity, rssi, count, visitId, timesAsReceived,
                           verifiedRotating)
        ), inserted AS (
            INSERT INTO sighting (id, stationId, bikeId, kind, seenAt, firstSeen, lastSeen, proximity, rssi, count, visitId, receivedAt, timesAsReceived,
                                  verifiedRotating)
            SELECT id, stationId, bikeId, kind, seenAt, firstSeen, lastSeen, proximity, nullif(rssi, 'NaN'), count, visitId, $12, timesAsReceived,
                   verifiedRotating
            FROM posted
            ON CONFLICT (id) DO NOTHING RETURNING id, bikeId, visitId, verifiedRotating
        ), owed AS (
            \(NotificationSQL.insert.rendered(for: .postgres).text)
            SELECT candidate.id || '\(MessageID.separator)' || t.channel, b.id, inserted.visitId, candidate.type, t.channel,
                   t.target, candidate.payload, $12, $12
            FROM unnest($13::text[], $14::text[], $15::text[], $16::text[], $19::boolean[])
                AS candidate (sightingId, id, type, payload, due)
            JOIN inserted ON inserted.id = candidate.sightingId
            JOIN bike b ON b.id = inserted.bikeId
            JOIN notificationTarget t ON t.bikeId = b.id AND t.state = 'confirmed'
            WHERE candidate.due AND \(NotificationSQL.owing(verified: "inserted.verifiedRotating").rendered(for: .postgres).text)
            ON CONFLICT DO NOTHING RETURNING visitId
        )
        SELECT posted.id, EXISTS (SELECT 1 FROM inserted WHERE inserted.id = posted.id),
               (SELECT count(*) FROM owed WHERE owed.visitId = posted.visitId)
        FROM posted
        """

    /// Each sighting's id, whether it was inserted (false for a repeat), and the messages its visit now owes.
    typealias Row = (String, Bool, Int)

    struct Posted {
        var sighting: SightingReport
        var stationId: Int64
        var visitId: String
        var candidates: [VisitNotifications.Candidate]

        init(_ sighting: SightingReport, station: Station, now: Date) throws {
            let visit = VisitNotifications(sighting: sighting, stationId: station.id)
            self.sighting = sighting
            stationId = station.id
            visitId = visit.visitId
            candidates = try visit.candidates(by: sighting, station: station, now: now)
        }
    }

    let posted: [Posted]
    let received: Double

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 19)
        bindings.append(posted.map(\.sighting.sightingId))
        bindings.append(posted.map(\.stationId))
        bindings.append(posted.map(\.sighting.bikeId))
        bindings.append(posted.map(\.sighting.kind.rawValue))
        bindings.append(posted.map(\.sighting.date.timeIntervalSince1970))
        bindings.append(posted.map(\.sighting.firstSeen.timeIntervalSince1970))
        bindings.append(posted.map(\.sighting.lastSeen.timeIntervalSince1970))
        bindings.append(posted.map(\.sighting.proximity))
        // An array of numbers cannot hold a null here: NaN stands for "no RSSI" and is stored as NULL.
        bindings.append(posted.map { $0.sighting.rssi ?? .nan })
        bindings.append(posted.map { Int64($0.sighting.count) })
        bindings.append(posted.map(\.visitId))
        bindings.append(received)
        let candidates = posted.flatMap { posted in posted.candidates.map { (posted.sighting.sightingId, $0) } }
        bindings.append(candidates.map(\.0))
        bindings.append(candidates.map(\.1.id))
        bindings.append(candidates.map(\.1.type.rawValue))
        bindings.append(candidates.map(\.1.payload))
        bindings.append(posted.map(\.sighting.timesAsReceived))
        bindings.append(posted.map(\.sighting.verifiedRotating))
        bindings.append(candidates.map(\.1.due))
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}
