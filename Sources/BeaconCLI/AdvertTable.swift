public import BeaconWire

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
