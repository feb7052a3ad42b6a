public import BeaconEngine
import BeaconWire
import TextFormats

/// One sighting as `beacond replay --missing` prints it.
public enum SightingLine {
    /// `--format jsonl`: exactly the keys sightingId, kind, bikeId, uuid, major, minor, firstSeen, lastSeen,
    /// count, rssi, rssiMax, proximity, distance. RSSI is rounded to 0.1 dB and distance to the centimetre.
    public static func json(_ sighting: Sighting) -> String {
        var text = "{\"sightingId\":\"\(sighting.id)\",\"kind\":\"\(sighting.kind.rawValue)\""
        text += ",\"bikeId\":" + JSONString.literal(sighting.bikeID)
        text +=
            ",\"uuid\":\"\(sighting.beacon.uuid)\",\"major\":\(sighting.beacon.major),\"minor\":\(sighting.beacon.minor)"
        text += ",\"firstSeen\":\"\(sighting.firstSeen.iso8601)\",\"lastSeen\":\"\(sighting.lastSeen.iso8601)\""
        text += ",\"count\":\(sighting.count)"
        text += ",\"rssi\":" + (sighting.rssi.map { rounded($0, places: 1) } ?? "null")
        text += ",\"rssiMax\":" + (sighting.rssiMax.map { String($0) } ?? "null")
        text += ",\"proximity\":\"\(sighting.proximity.rawValue)\""
        text += ",\"distance\":" + (sighting.distance.map { rounded($0, places: 2) } ?? "null")
        return text + "}\n"
    }

    /// A decimal with at most `places` fraction digits, as JSON and people both read it.
    static func rounded(_ value: Double, places: Int) -> String {
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        let scaled = (value * scale).rounded()
        if places == 0 { return String(Int(scaled)) }
        return String(scaled / scale)
    }
}

/// `--format table` for sightings: one row per sighting in 80 columns, under a line naming the date
/// (of the visit's first advert) whenever it changes. Bike ids longer than 14 characters are cut.
public struct SightingTable {
    private var date: String?

    public init() {}

    /// FIRST and LAST are UTC times of day: the visit's first advert and the latest one up to this event.
    public static let header = "KIND    BIKE            MINOR  FIRST     LAST        COUNT   RSSI  PROXIMITY\n"

    public mutating func rows(for sighting: Sighting) -> String {
        var text = ""
        let first = sighting.firstSeen
        if date != first.isoDate {
            date = first.isoDate
            text += "-- \(first.isoDate) (UTC)\n"
        }
        let printable = sighting.bikeID.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }
        var bike = String(String.UnicodeScalarView(printable))
        if bike.count > 14 { bike = String(bike.prefix(13)) + "…" }
        text += rightPad(sighting.kind.rawValue, 6) + "  " + rightPad(bike, 14) + "  "
        text += leftPad(String(sighting.beacon.minor), 5) + "  "
        text += String(first.clockMilliseconds.prefix(8)) + "  "
        text += String(sighting.lastSeen.clockMilliseconds.prefix(8)) + "  "
        text += leftPad(String(sighting.count), 7) + "  "
        text += leftPad(sighting.rssi.map { SightingLine.rounded($0, places: 0) } ?? "-", 5) + "  "
        text += sighting.proximity.rawValue
        return text + "\n"
    }
}
