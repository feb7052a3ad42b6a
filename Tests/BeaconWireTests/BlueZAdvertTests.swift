import BeaconWire
import Testing

/// The bytes beacond gives bluetoothd and takes from it: monitor patterns, and reports rebuilt from D-Bus.
@Suite(.timeLimit(.minutes(20))) struct BlueZAdvertTests {
    static let region = BeaconRegion("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1")!

    @Test func aPatternIsTheIBeaconPrefixUUIDAndMajor() {
        let pattern = BlueZAdvert.pattern(for: Self.region)
        #expect(
            pattern == [
                0x4C, 0x00, 0x02, 0x15, 0xE2, 0xC5, 0x6D, 0xB5, 0xDF, 0xFB, 0x48, 0xD2, 0xB0, 0x60, 0xD0, 0xF5, 0xA7,
                0x10, 0x96, 0xE0, 0x00, 0x01,
            ])
        // Without a major the pattern stops after the UUID, so every major matches.
        #expect(BlueZAdvert.pattern(for: BeaconRegion(uuid: Self.region.uuid)).count == 20)
    }

    /// A report rebuilt from Device1's ManufacturerData decodes to the iBeacon, address and RSSI it came from.
    @Test func aRebuiltReportDecodesLikeTheAir() throws {
        let data: [UInt8] =
            [0x02, 0x15] + Array(BlueZAdvert.pattern(for: Self.region).dropFirst(4)) + [0x00, 0x02, 0xC5]
        let address = BluetoothAddress(rawValue: 0x33F0_36C9_F72C)
        let report = try #require(
            BlueZAdvert.report(address: address, random: true, manufacturerData: [(UInt16(0x004C), data)], rssi: -67))
        var decoder = AdvertDecoder()
        var adverts: [Advert] = []
        report.withUnsafeBytes {
            decoder.decode(CaptureRecord(time: nil, link: .h4(incoming: true), adapter: 1, payload: $0)) {
                adverts.append($0)
            }
        }
        #expect(adverts.count == 1)
        let advert = try #require(adverts.first)
        #expect(advert.beacon == IBeacon(uuid: Self.region.uuid, major: 1, minor: 2, measuredPower: -59))
        #expect(advert.address == address && advert.addressType == .random && advert.rssi == -67 && advert.adapter == 1)
        // No RSSI from BlueZ: HCI's 127, "not available", which decodes to none.
        let silent = try #require(
            BlueZAdvert.report(address: address, random: false, manufacturerData: [(UInt16(0x004C), data)], rssi: nil))
        #expect(silent.last == 127)
    }

    @Test func dataThatCannotFitOneReportIsRefused() {
        let big = [UInt8](repeating: 0xAA, count: 29)
        #expect(
            BlueZAdvert.report(
                address: BluetoothAddress(rawValue: 1), random: false, manufacturerData: [(UInt16(0x004C), big)],
                rssi: nil) == nil)
    }

    @Test func devicePathsGiveAdapterAndAddress() {
        let parsed = BlueZAdvert.device(path: "/org/bluez/hci1/dev_33_F0_36_C9_F7_2C")
        #expect(parsed?.adapter == 1 && parsed?.address.description == "33:F0:36:C9:F7:2C")
        for bad in [
            "/org/bluez/hci1", "/org/bluez/hciX/dev_33_F0_36_C9_F7_2C", "/org/bluez/hci1/dev_33_F0_36_C9_F7",
            "/org/bluez/hci1/dev_33_F0_36_C9_F7_ZZ", "/",
        ] {
            #expect(BlueZAdvert.device(path: bad) == nil, "\(bad)")
        }
    }
}
