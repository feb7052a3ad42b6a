public import Foundation

/// Whether a station's times can be believed, and what is stored when they cannot. Pure: the caller gives the time
/// the registry received the sighting.
///
/// A station's clock can be wrong (a Pi without its network time, a battery-less RTC after a power cut, a hostile
/// station): a time before 2020-01-01, when no beacond existed, or more than a day ahead of the registry's clock
/// is not believed. The sighting is still stored, since a missing bike heard somewhere is worth knowing about, but
/// with the time the registry received it in every time field, and marked (`timesAsReceived`), so the owner reads
/// "the station's clock was wrong; shown as received". Its visit keeps the station's own first-seen time as its
/// key (`visitStart`), so a visit's sightings still make one seen and one left.
public enum StationClockCheck {
    /// 2020-01-01T00:00:00Z.
    public static let earliest = Date(timeIntervalSince1970: 1_577_836_800)
    /// How far ahead of the registry's clock a station's may be.
    public static let aheadAllowed: TimeInterval = 86_400

    public static func believable(_ time: Date, receivedAt now: Date) -> Bool {
        time >= earliest && time <= now.addingTimeInterval(aheadAllowed)
    }

    /// The sighting as it is stored: as sent when every time is believable, otherwise every time the receipt's.
    public static func checked(_ sighting: SightingReport, receivedAt now: Date) -> SightingReport {
        let times = [sighting.date, sighting.firstSeen, sighting.lastSeen]
        guard !times.allSatisfy({ believable($0, receivedAt: now) }) else { return sighting }
        var stored = sighting
        stored.date = now
        stored.firstSeen = now
        stored.lastSeen = now
        stored.timesAsReceived = true
        return stored
    }
}
