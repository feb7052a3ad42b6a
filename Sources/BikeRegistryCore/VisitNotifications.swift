package import Foundation

/// What a sighting owes its bike's owner, decided the same way by every store. Pure: no storage, no clock.
///
/// A visit is the station, the bike and the visit's first-seen time. Its first sighting to arrive (the enter, or an
/// update or exit when the enter was lost) owes a `bike.seen`; its exit a `bike.left`. Each is owed on every
/// confirmed target of a bike that is missing, not paused, and (its beacon rotating) verified (`NotificationSQL`
/// writes that rule for the database), under an id derived from the visit, its type and the channel
/// (`MessageID`), so a store that keeps it once (the table's unique key) keeps it once however often, or in whatever
/// order, the visit's sightings come. Updates owe nothing new.
package struct VisitNotifications {
    package let visitId: String

    package init(sighting: SightingReport, stationId: Int64) {
        // The station's own first-seen time, believed or not (a parsed time is within years 0000-9999, so its
        // milliseconds fit an Int64).
        let firstSeenMilliseconds = Int64((sighting.visitStart.timeIntervalSince1970 * 1000).rounded())
        visitId = Secrets.derivedID(
            prefix: "visit_", [String(stationId), sighting.bikeId, String(firstSeenMilliseconds)])
    }

    /// Every message a visit can owe a missing bike's owner, seen and left, before the bike's targets are known:
    /// `due` says whether this sighting owes it (left only on an exit). A message not due has neither id nor payload,
    /// since nothing is written for it. Two, always: PostgreSQL plans the statement that writes them once, for a batch
    /// of any size, and with one of them not due on an enter it looks each bike up by its key, where otherwise it
    /// guesses more rows and reads every missing bike (docs/performance-history.md).
    package func candidates(by sighting: SightingReport, station: Station, now: Date) throws -> [Candidate] {
        try [(NotificationPayload.Kind.seen, sighting.firstSeen), (.left, sighting.lastSeen)].map { type, at in
            let due = type == .seen || sighting.kind == .exit
            guard due else { return Candidate(id: "", type: type, payload: "", due: false) }
            let payload = try NotificationPayload(
                type: type, timestamp: now, bikeId: sighting.bikeId, station: station, seenAt: at,
                proximity: sighting.proximity, visitId: visitId, timesAsReceived: sighting.timesAsReceived
            ).json()
            return Candidate(id: MessageID.owed([visitId, type.rawValue]), type: type, payload: payload, due: true)
        }
    }

    /// A message owed on each of the bike's targets: its id there is `MessageID.on(channel, owed: id)`.
    package struct Candidate: Equatable {
        package var id: String
        package var type: NotificationPayload.Kind
        package var payload: String
        package var due: Bool
    }
}
