import BeaconCapture
import BeaconTestSupport
import BeaconWire
import Foundation
import Testing

@testable import BeaconCLI

/// `beacond scan`: the table it draws (fed from a real capture) and how it fails without a radio.
@Suite(.timeLimit(.minutes(20))) struct ScanCommandTests {
    static let btvirt = Fixtures.sharedDirectory.appendingPathComponent("btvirt-le-legacy.btsnoop")
    static let uuid = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"

    static func table(_ capture: URL, regions: [BeaconRegion]) throws -> ScanTable {
        var table = ScanTable(regions: regions)
        _ = try CaptureFile(path: capture.path).forEachAdvert { advert, _ in table.add(advert) }
        return table
    }

    @Test func oneRowPerBeaconWithItsCountAndLastSighting() throws {
        let table = try Self.table(Self.btvirt, regions: [BeaconRegion(Self.uuid + ":1")!])
        let adverts = try Decode.file(Self.btvirt).adverts
        let last = adverts.last!.advert
        let text = table.render(
            now: CaptureTime(nanosecondsSinceEpoch: last.time!.nanosecondsSinceEpoch + 4_200_000_000))
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines[0] == ScanTable.header)
        // Three adverts of one beacon (from two addresses: the last one's is shown), 4 s after the last.
        #expect(lines[1] == "\(Self.uuid)      1      2    -59     -      3    4 s ago  \(last.address)")
        #expect(lines.last == "1 beacons; 0 other adverts (showing \(Self.uuid):1)")
    }

    @Test func otherRegionsAreCountedButNotShownUnlessAll() throws {
        let elsewhere = try Self.table(Self.btvirt, regions: [BeaconRegion("21EECF71-D5C7-4A00-9B90-27C94B5146EA")!])
        #expect(elsewhere.rows.isEmpty && elsewhere.others == 3)
        #expect(elsewhere.render(now: CaptureTime(nanosecondsSinceEpoch: 0)).contains("--all shows every one"))
        let cafe = try Self.table(Fixtures.cafeCapture, regions: [])
        #expect(cafe.rows.count > 3)
        let text = cafe.render(now: CaptureTime(nanosecondsSinceEpoch: 0))
        #expect(text.contains("21EECF71-D5C7-4A00-9B90-27C94B5146EA"))
        // Sorted by UUID, major, minor; every line fits 100 columns.
        let keys = cafe.rows.keys.sorted()
        #expect(keys == cafe.rows.keys.sorted { ($0.uuid, $0.major, $0.minor) < ($1.uuid, $1.major, $1.minor) })
        #expect(text.split(separator: "\n").allSatisfy { $0.count <= 100 })
    }

    @Test func withoutBluetoothItSaysSoAndExits69() async throws {
        let run = try await BeacondRun(["scan", "--duration", "1", "--config", "/dev/null"])
        #expect(run.status == 69)
        #expect(
            run.stderr
                == "beacond: this kernel has no Bluetooth support (load the bluetooth module, or use a kernel with it)\n"
        )
    }

    @Test func aBadRegionIsAConfigurationError() async throws {
        let run = try await BeacondRun(["scan", "--region", "not-a-uuid", "--config", "/dev/null"])
        #expect(run.status == 78)
        #expect(run.stderr.contains("region"))
    }

    @Test func anUnknownBackendIsRefusedWithTheChoices() async throws {
        let run = try await BeacondRun(["scan", "--backend", "bogus", "--config", "/dev/null"])
        #expect(run.status == 64)
        #expect(
            run.stderr.contains("'bogus'") && ["hci", "monitor", "dbus"].allSatisfy { run.stderr.contains("'\($0)'") },
            "\(run.stderr)")
    }
}
