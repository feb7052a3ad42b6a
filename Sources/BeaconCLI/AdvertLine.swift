public import BeaconWire

/// One iBeacon advertisement as `beacond replay` prints it.
public struct AdvertLine: Sendable {
    public var frame: Int
    public var advert: Advert
    public var beacon: IBeacon

    public init?(frame: Int, advert: Advert) {
        guard let beacon = advert.beacon else { return nil }
        self.frame = frame
        self.advert = advert
        self.beacon = beacon
    }

    /// `--format jsonl`: exactly the keys frame, time, adapter, addr, addrType, uuid, major, minor, power,
    /// rssi. Every value is a number, null or a string of hex digits and punctuation, so nothing needs escaping.
    public var json: String {
        var text = "{\"frame\":\(frame)"
        text += ",\"time\":" + (advert.time.map { "\"\($0.iso8601)\"" } ?? "null")
        text += ",\"adapter\":" + (advert.adapter.map { String($0) } ?? "null")
        text += ",\"addr\":\"\(advert.address)\",\"addrType\":\"\(advert.addressType.name)\""
        text += ",\"uuid\":\"\(beacon.uuid)\",\"major\":\(beacon.major),\"minor\":\(beacon.minor)"
        text += ",\"power\":\(beacon.measuredPower),\"rssi\":" + (advert.rssi.map { String($0) } ?? "null")
        return text + "}\n"
    }
}

/// `--format table`: aligned columns that fit an 80-column terminal. The UUID (36 characters) and the
/// date would not fit on every row, so they head each run of rows that share them.
public struct AdvertTable {
    private var group: (uuid: BeaconUUID, date: String)?

    public init() {}

    public static let header = "   FRAME  TIME (UTC)    ADDRESS            HCI   MAJOR  MINOR  POWER  RSSI\n"

    public mutating func rows(for line: AdvertLine) -> String {
        var text = ""
        let date = line.advert.time?.isoDate ?? "no timestamps"
        if group?.uuid != line.beacon.uuid || group?.date != date {
            group = (line.beacon.uuid, date)
            text += "-- \(line.beacon.uuid)  \(date)\n"
        }
        let advert = line.advert
        text += leftPad(String(line.frame), 8) + "  "
        text += rightPad(advert.time?.clockMilliseconds ?? "-", 12) + "  "
        text += String(describing: advert.address) + "  "
        text += rightPad(advert.adapter.map { "hci\($0)" } ?? "-", 4) + "  "
        text += leftPad(String(line.beacon.major), 5) + "  " + leftPad(String(line.beacon.minor), 5) + "  "
        text += leftPad(String(line.beacon.measuredPower), 5) + "  "
        text += leftPad(advert.rssi.map { String($0) } ?? "-", 4)
        return text + "\n"
    }

    public mutating func startFile(_ path: String, format: CaptureFormat) -> String {
        group = nil
        return "capture \(path) (\(format.displayName))\n"
    }
}

func leftPad(_ text: String, _ width: Int) -> String {
    String(repeating: " ", count: max(0, width - text.count)) + text
}

func rightPad(_ text: String, _ width: Int) -> String {
    text + String(repeating: " ", count: max(0, width - text.count))
}
