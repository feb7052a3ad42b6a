package import Foundation

/// What a sighting owes its bike's owner, decided the same way by every store. Pure: no storage, no clock.
///
/// A visit is the station, the bike and the visit's first-seen time. Its first sighting to arrive (the enter, or an
/// update or exit when the enter was lost) owes a `bike.seen`; its exit a `bike.left`. Each message has an id derived
/// from the visit, its type and the channel, so a store that keeps it once (the table's unique key) keeps it once
/// however often, or in whatever order, the visit's sightings come. Updates owe nothing new.
package struct VisitNotifications {
    /// A message to insert unless one with its id is kept already.
    package struct Row: Equatable {
        package var id: String
        package var type: NotificationPayload.Kind
        package var channel: PendingNotification.Channel
        package var target: String
        package var payload: String
    }

    package let visitId: String

    package init(sighting: SightingReport, stationId: Int64) {
        // The station's own first-seen time, believed or not (a parsed time is within years 0000-9999, so its
        // milliseconds fit an Int64).
        let firstSeenMilliseconds = Int64((sighting.visitStart.timeIntervalSince1970 * 1000).rounded())
        visitId = Secrets.derivedID(
            prefix: "visit_", [String(stationId), sighting.bikeId, String(firstSeenMilliseconds)])
    }

    /// The messages `sighting` owes the owner of `bike`, which is missing; none when it has no target, or when its
    /// beacon rotates and the sighting is unverified.
    package func owed(by sighting: SightingReport, bike: Bike, station: Station, now: Date) throws -> [Row] {
        guard !Self.unverified(sighting, bikeIsRotating: bike.isRotating) else { return [] }
        return try candidates(by: sighting, station: station, now: now).compactMap { candidate in
            guard candidate.due, let target = bike.target(on: candidate.channel) else { return nil }
            return Row(
                id: candidate.id, type: candidate.type, channel: candidate.channel, target: target,
                payload: candidate.payload)
        }
    }

    /// Every message a visit can owe a missing bike's owner, seen and left on each channel, before the bike's targets
    /// are known: `due` says whether this sighting owes it (left only on an exit). A message not due has neither id
    /// nor payload, since nothing is written for it. A store that reads the bike in the statement that writes them
    /// keeps those due on a channel the bike has a target for. Six, always: PostgreSQL plans that statement once,
    /// for a batch of any size, and with half of them not due it looks each bike up by its key, where otherwise it
    /// guesses more rows and reads every missing bike (docs/performance-history.md).
    package func candidates(by sighting: SightingReport, station: Station, now: Date) throws -> [Candidate] {
        var candidates: [Candidate] = []
        for (type, at) in [(NotificationPayload.Kind.seen, sighting.firstSeen), (.left, sighting.lastSeen)] {
            let due = type == .seen || sighting.kind == .exit
            let payload =
                due
                ? try NotificationPayload(
                    type: type, timestamp: now, bikeId: sighting.bikeId, station: station, seenAt: at,
                    proximity: sighting.proximity, visitId: visitId, timesAsReceived: sighting.timesAsReceived
                ).json() : ""
            for channel in PendingNotification.Channel.allCases {
                // An id is a SHA-256: three of a post's six would be hashed for nothing.
                let id = due ? Secrets.derivedID(prefix: "msg_", [visitId, type.rawValue, channel.rawValue]) : ""
                candidates.append(Candidate(id: id, type: type, channel: channel, payload: payload, due: due))
            }
        }
        return candidates
    }

    /// Whether the sighting is kept as unverified: its bike's beacon rotates and the server did not verify the
    /// identity heard (`SightingReport.verifiedRotating`).
    package static func unverified(_ sighting: SightingReport, bikeIsRotating: Bool) -> Bool {
        bikeIsRotating && !sighting.verifiedRotating
    }

    package struct Candidate: Equatable {
        package var id: String
        package var type: NotificationPayload.Kind
        package var channel: PendingNotification.Channel
        package var payload: String
        package var due: Bool
    }
}
