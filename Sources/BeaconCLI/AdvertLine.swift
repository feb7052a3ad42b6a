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
        var text: [UInt8] = []
        appendJSON(to: &text)
        return String(decoding: text, as: UTF8.self)
    }

    /// The JSON line, written straight into the output bytes (a replay writes one per iBeacon).
    public func appendJSON(to text: inout [UInt8]) {
        text.appendASCII("{\"frame\":")
        text.appendDecimal(Int64(frame))
        text.appendASCII(",\"time\":")
        if let time = advert.time {
            text.append(UInt8(ascii: "\""))
            time.appendISO8601(to: &text)
            text.append(UInt8(ascii: "\""))
        } else {
            text.appendASCII("null")
        }
        text.appendASCII(",\"adapter\":")
        if let adapter = advert.adapter { text.appendDecimal(Int64(adapter)) } else { text.appendASCII("null") }
        text.appendASCII(",\"addr\":\"")
        advert.address.append(to: &text)
        text.appendASCII(advert.addressType == .public ? "\",\"addrType\":\"public\"" : "\",\"addrType\":\"random\"")
        text.appendASCII(",\"uuid\":\"")
        beacon.uuid.append(to: &text)
        text.appendASCII("\",\"major\":")
        text.appendDecimal(Int64(beacon.major))
        text.appendASCII(",\"minor\":")
        text.appendDecimal(Int64(beacon.minor))
        text.appendASCII(",\"power\":")
        text.appendDecimal(Int64(beacon.measuredPower))
        text.appendASCII(",\"rssi\":")
        if let rssi = advert.rssi { text.appendDecimal(Int64(rssi)) } else { text.appendASCII("null") }
        text.appendASCII("}\n")
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
