import Foundation

/// What a sighting owes its bike's owner, decided the same way by every store. Pure: no storage, no clock.
///
/// A visit is the station, the bike and the visit's first-seen time. Its first sighting to arrive (the enter, or an
/// update or exit when the enter was lost) owes a `bike.seen`; its exit a `bike.left`. Each message has an id derived
/// from the visit, its type and the channel, so a store that keeps it once (the table's unique key) keeps it once
/// however often, or in whatever order, the visit's sightings come. Updates owe nothing new.
struct VisitNotifications {
    /// A message to insert unless one with its id is kept already.
    struct Row: Equatable {
        var id: String
        var type: NotificationPayload.Kind
        var channel: PendingNotification.Channel
        var target: String
        var payload: String
    }

    let visitId: String

    init(sighting: SightingReport, stationId: Int64) {
        let firstSeenMilliseconds = Int64((sighting.firstSeen.timeIntervalSince1970 * 1000).rounded())
        visitId = Secrets.derivedID(prefix: "visit_", [String(stationId), sighting.bikeId, String(firstSeenMilliseconds)])
    }

    /// The messages `sighting` owes the owner of `bike`, which is missing; none when it has no target.
    func owed(by sighting: SightingReport, bike: Bike, station: Station, now: Date) throws -> [Row] {
        var owed = [(type: NotificationPayload.Kind.seen, at: sighting.firstSeen)]
        if sighting.kind == .exit { owed.append((.left, sighting.lastSeen)) }
        let targets: [(PendingNotification.Channel, String)] = [(.webhook, bike.webhookURL), (.ntfy, bike.ntfyURL)].compactMap { channel, url in
            url.map { (channel, $0) }
        }
        var rows: [Row] = []
        for (type, at) in owed {
            let payload = try NotificationPayload(
                type: type, timestamp: now, bikeId: bike.id, station: station, seenAt: at, proximity: sighting.proximity, visitId: visitId
            ).json()
            for (channel, target) in targets {
                rows.append(
                    Row(
                        id: Secrets.derivedID(prefix: "msg_", [visitId, type.rawValue, channel.rawValue]), type: type, channel: channel,
                        target: target, payload: payload))
            }
        }
        return rows
    }
}
