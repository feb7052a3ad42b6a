/// What beacond tells BlueZ and learns from it over D-Bus, as bytes: the advertisement-monitor patterns for
/// the configured regions, and an LE Advertising Report rebuilt from a device's D-Bus properties (so the
/// `dbus` backend feeds the same decoder as the others). Pure: the D-Bus side lives in BeaconCapture.
public enum BlueZAdvert {
    /// An `org.bluez.AdvertisementMonitor1` or-pattern for a region: AD type 0xFF (manufacturer specific) at
    /// offset 0, content `4C 00 02 15 <UUID> [<major>]` (Apple's company id, iBeacon type and length).
    public static func pattern(for region: BeaconRegion) -> [UInt8] {
        var content: [UInt8] = [0x4C, 0x00, 0x02, 0x15]
        for shift in stride(from: 120, through: 0, by: -8) {
            content.append(UInt8(truncatingIfNeeded: region.uuid.rawValue >> UInt128(shift)))
        }
        if let major = region.major { content += [UInt8(major >> 8), UInt8(major & 0xFF)] }
        return content
    }

    /// An H4 LE Advertising Report event carrying one report: `manufacturerData` (company id → data, as
    /// Device1's ManufacturerData holds it) as AD structures, the address and its type, and the RSSI (127,
    /// HCI's "not available", when BlueZ gave none). Event type 0x03 (non-connectable): D-Bus does not say.
    /// nil when the data cannot fit one report (31 bytes).
    public static func report(
        address: BluetoothAddress, random: Bool, manufacturerData: [(company: UInt16, data: [UInt8])], rssi: Int8?
    ) -> [UInt8]? {
        var data: [UInt8] = []
        for (company, bytes) in manufacturerData {
            guard bytes.count + 3 <= 255 else { return nil }
            data += [UInt8(bytes.count + 3), 0xFF, UInt8(company & 0xFF), UInt8(company >> 8)] + bytes
        }
        guard data.count <= 31 else { return nil }
        var report: [UInt8] = [0x01, 0x03, random ? 0x01 : 0x00]
        for shift in stride(from: 0, through: 40, by: 8) {
            report.append(UInt8(truncatingIfNeeded: address.rawValue >> UInt64(shift)))
        }
        report.append(UInt8(data.count))
        report += data
        report.append(UInt8(bitPattern: rssi ?? 127))
        return [0x04, 0x3E, UInt8(report.count + 1), 0x02] + report
    }

    /// The address in a BlueZ device path (`/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF`), and the adapter index.
    public static func device(path: String) -> (adapter: UInt16, address: BluetoothAddress)? {
        let parts = path.split(separator: "/")
        guard parts.count == 4, parts[0] == "org", parts[1] == "bluez", parts[2].hasPrefix("hci"),
            let adapter = UInt16(parts[2].dropFirst(3)), parts[3].hasPrefix("dev_")
        else { return nil }
        let hex = parts[3].dropFirst(4).split(separator: "_")
        guard hex.count == 6 else { return nil }
        var value: UInt64 = 0
        for byte in hex {
            guard byte.count == 2, let number = UInt8(byte, radix: 16) else { return nil }
            value = value << 8 | UInt64(number)
        }
        return (adapter, BluetoothAddress(rawValue: value))
    }
}
