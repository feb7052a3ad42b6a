import BeaconWire

/// What `beacond scan` shows: one row per iBeacon heard (UUID, major, minor), with its last RSSI, how many
/// adverts, and how long ago the last one came. Pure: adverts in, text out.
struct ScanTable {
    struct Row {
        var beacon: IBeacon
        var address: BluetoothAddress
        var rssi: Int8?
        var count = 0
        var lastSeen: CaptureTime
    }

    /// The regions shown; empty shows every iBeacon (`--all`).
    let regions: [BeaconRegion]
    private(set) var rows: [BeaconKey: Row] = [:]
    private(set) var others = 0

    struct BeaconKey: Hashable, Comparable {
        var uuid: String
        var major: UInt16
        var minor: UInt16
        static func < (a: Self, b: Self) -> Bool { (a.uuid, a.major, a.minor) < (b.uuid, b.major, b.minor) }
    }

    init(regions: [BeaconRegion]) { self.regions = regions }

    mutating func add(_ advert: Advert) {
        guard let beacon = advert.beacon else {
            others += 1
            return
        }
        guard regions.isEmpty || regions.contains(where: { $0.contains(beacon) }) else {
            others += 1
            return
        }
        let key = BeaconKey(uuid: beacon.uuid.description, major: beacon.major, minor: beacon.minor)
        let time = advert.time ?? CaptureTime(nanosecondsSinceEpoch: 0)
        var row = rows[key] ?? Row(beacon: beacon, address: advert.address, lastSeen: time)
        row.count += 1
        row.rssi = advert.rssi
        row.address = advert.address
        row.beacon = beacon
        row.lastSeen = time
        rows[key] = row
    }

    static let header = "UUID                                  MAJOR  MINOR  POWER  RSSI  COUNT  LAST SEEN  ADDRESS"

    /// The table at `now`, sorted by UUID, major, minor.
    func render(now: CaptureTime) -> String {
        var lines = [Self.header]
        for key in rows.keys.sorted() {
            let row = rows[key]!
            let ago = max(0, (now.nanosecondsSinceEpoch - row.lastSeen.nanosecondsSinceEpoch) / 1_000_000_000)
            lines.append(
                key.uuid + "  " + pad(row.beacon.major, 5) + "  " + pad(row.beacon.minor, 5) + "  "
                    + pad(row.beacon.measuredPower, 5) + "  " + pad(row.rssi.map(String.init) ?? "-", 4) + "  "
                    + pad(row.count, 5) + "  " + pad("\(ago) s ago", 9) + "  " + row.address.description)
        }
        if rows.isEmpty {
            lines.append(
                regions.isEmpty
                    ? "(no iBeacon heard yet)" : "(no iBeacon in \(regionList) heard yet; --all shows every one)")
        }
        lines.append(
            "\(rows.count) beacons; \(others) other adverts" + (regions.isEmpty ? "" : " (showing \(regionList))"))
        return lines.joined(separator: "\n") + "\n"
    }

    private var regionList: String { regions.map(\.description).joined(separator: ", ") }

    private func pad(_ value: some CustomStringConvertible, _ width: Int) -> String {
        let text = value.description
        return String(repeating: " ", count: max(0, width - text.count)) + text
    }
}
