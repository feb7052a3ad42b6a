import BeaconTestSupport
import BikeRegistryCore
import BikeRegistryStore
import Crypto
import Foundation
import NIOHTTP1
import Testing

/// Issue 41 end to end: `bike-registry serve --key-file` with two rotating beacons issued and claimed, and the real
/// `beacond run` replaying a capture made now: bike A parked 10 minutes rotating every 60 s, beside a clone of A's
/// identity of 3 hours ago, and bike B whose clock runs 40 minutes fast. A's owner is told once seen and once left;
/// the clone is never matched by the station, and posted straight to the registry it is kept unverified and tells
/// nobody; B is verified and its offset learned.
@Suite(.timeLimit(.minutes(10))) struct RotatingEndToEndTests {
    static let region = "21EECF71-D5C7-4A00-9B90-27C94B5146EA"

    /// One advertising report of an iBeacon from `address` (most significant byte first) as `hcidump -R` shows an
    /// incoming H4 packet, at `time` in Unix seconds.
    static func advert(at time: Double, address: [UInt8], major: UInt16, minor: UInt16, rssi: Int8) -> String {
        var data: [UInt8] = [0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15]
        data += bytes(hex: region.replacingOccurrences(of: "-", with: ""))
        data += [UInt8(major >> 8), UInt8(major & 0xFF), UInt8(minor >> 8), UInt8(minor & 0xFF), 0xC5]
        // LE Meta, Advertising Report: one report, ADV_IND, a random address (little-endian), the data, the RSSI.
        let report: [UInt8] =
            [0x02, 0x01, 0x00, 0x01] + address.reversed() + [UInt8(data.count)] + data + [UInt8(bitPattern: rssi)]
        let packet: [UInt8] = [0x04, 0x3E, UInt8(report.count)] + report
        let hex = packet.map { String(format: "%02X", $0) }.joined(separator: " ")
        return String(format: "%.6f", time) + " > " + hex
    }

    /// A beacon's adverts, one a second from `start` for `seconds`, advertising the identity of `clockAhead`
    /// seconds later than each advert's time, from that identity's address.
    static func adverts(key: [UInt8], start: Double, seconds: Int, clockAhead: Double, rssi: Int8) -> [(Double, String)]
    {
        (0..<seconds).map { second in
            let time = start + Double(second) + 0.25
            let identity = RotatingIdentity(
                key: SymmetricKey(data: key), period: 60, unixTime: UInt64(time + clockAhead))
            return (
                time,
                advert(at: time, address: identity.address, major: identity.major, minor: identity.minor, rssi: rssi)
            )
        }
    }

    static func bytes(hex: String) -> [UInt8] { RotatingBeaconProvisioningTests.bytes(hex: hex) }

    @Test(arguments: StoreKind.allCases) func aParkedRotatingBikeIsOneVisitAndACloneTellsNobody(store: StoreKind)
        async throws
    {
        let directory = try TemporaryDirectory("bike-registry-rotating-e2e")
        defer { directory.remove() }
        let testDatabase = try await TestDatabase.make(store, in: directory.path)
        try await withTeardown({ await testDatabase.drop() }) {
            let database = testDatabase.location
            let keyFile = directory.file("beacon-key")
            try "\(String(repeating: "5e", count: 32))\n".write(toFile: keyFile, atomically: true, encoding: .utf8)
            let issued = try await BeacondRun.run(
                executable: BeacondRun.registryBinary.path,
                [
                    "beacons", "issue", "--rotating", "--region", Self.region, "--count", "2", "--period", "60",
                    "--key-file", keyFile, "--database", database,
                ])
            #expect(issued.status == 0, "\(issued.stderr)")
            let rows = issued.stdout.split(separator: "\n").dropFirst().map {
                $0.split(separator: ",").map(String.init)
            }
            try #require(rows.count == 2)
            let process = try await RegistryProcess.start(
                database: database, in: directory, registration: "claim-code", arguments: ["--key-file", keyFile])
            let (server, registry, stationKey) = (process.server, process.client, process.stationKey)
            let receiver = NotificationReceiver()
            try await receiver.start()
            try await withTeardown({
                await receiver.stop()
                server.terminate()
                _ = await server.waitForExit(seconds: 10)
            }) {
                var bikes: [String] = []
                for (index, row) in rows.enumerated() {
                    let claimed = try await registry.request(
                        .POST, "/owner/bikes",
                        body: #"{"claimCode":"\#(row[1])","make":"Honda","model":"CB500","colour":"blue"}"#)
                    #expect(claimed.status == 201, "\(claimed.body)")
                    let id = try #require(claimed.object["id"] as? String)
                    let token = try #require(claimed.object["ownerToken"] as? String)
                    let patch = #"{"missing":true,"notify":{"webhook":"\#(receiver.url("/owner-\(index)"))"}}"#
                    let changed = try await registry.request(.PATCH, "/owner/bikes/\(id)", bearer: token, body: patch)
                    #expect(changed.status == 200, "\(changed.body)")
                    bikes.append(id)
                }

                // The capture, timed now: the last 10 minutes.
                let keyA = Self.bytes(hex: rows[0][2])
                let keyB = Self.bytes(hex: rows[1][2])
                let end = Date().timeIntervalSince1970.rounded(.down)
                let start = end - 600
                var lines =
                    Self.adverts(key: keyA, start: start, seconds: 600, clockAhead: 0, rssi: -60)
                    + Self.adverts(key: keyA, start: start + 0.5, seconds: 600, clockAhead: -3 * 3_600, rssi: -58)
                    + Self.adverts(key: keyB, start: start + 0.1, seconds: 600, clockAhead: 2_400, rssi: -70)
                lines.sort { $0.0 < $1.0 }
                let capture = directory.file("rotating.txt")
                try (lines.map(\.1).joined(separator: "\n") + "\n").write(
                    toFile: capture, atomically: true, encoding: .utf8)

                let apiKey = directory.file("api-key")
                try "\(stationKey)\n".write(toFile: apiKey, atomically: true, encoding: .utf8)
                try "".write(toFile: directory.file("empty.conf"), atomically: true, encoding: .utf8)
                let station = try DaemonProcess(
                    [
                        "run", "--replay", capture, "--speed", "0", "--exit-when-drained", "--registry",
                        registry.baseURL, "--api-key-file", apiKey, "--state-dir", directory.file("state"),
                        "--control-socket", directory.file("control.sock"), "--station-id", "ace-cafe",
                        "--latitude", "0", "--longitude", "0", "--config", directory.file("empty.conf"),
                        // The region without a major: rotating identities use every major.
                        "--region", Self.region,
                    ], logDirectory: directory.path, name: "beacond")
                #expect(
                    await station.waitForExit(seconds: 120) == 0,
                    "beacond:\n\(station.stderr)\nregistry:\n\(server.stderr.suffix(6000))")

                // Each owner: one bike.seen and one bike.left, for the whole stay across ten rotations.
                _ = await receiver.waitFor(4, seconds: 30)
                let counts = try await testDatabase.settled()
                #expect(
                    counts.owed == 0 && counts.abandoned == 0 && counts.delivered == 4,
                    "\(counts)\nbeacond:\n\(station.stderr.suffix(6000))\nregistry:\n\(server.stderr.suffix(6000))")
                for index in 0..<2 {
                    let types = receiver.received.filter { $0.path == "/owner-\(index)" }.compactMap {
                        (try? JSONSerialization.jsonObject(with: Data($0.body.utf8)) as? [String: Any])?["type"]
                            as? String
                    }
                    #expect(types.sorted() == ["bike.left", "bike.seen"], "owner \(index): \(types)")
                }
                let stats = try await Self.stats(database)
                #expect(stats["unverifiedSightings"] as? Int == 0, "the station never matched the clone")

                // B's clock, 40 minutes fast, was learned; A's was right.
                let opened = try await testDatabase.open()
                let (_, missing) = try await opened.missingBikes()
                await opened.close()
                let offsets = Dictionary(uniqueKeysWithValues: missing.map { ($0.id, $0.rotating?.clockOffset) })
                #expect(offsets[bikes[0]] == 0 && offsets[bikes[1]] == 2_400, "\(offsets)")

                // The clone, posted straight to the registry with the station's key: kept, unverified, silent.
                let now = Date()
                let clone = RotatingIdentity(
                    key: SymmetricKey(data: keyA), period: 60, unixTime: UInt64(now.timeIntervalSince1970 - 10_800))
                let id = UUID().uuidString.lowercased()
                let time = ISOTime.format(now)
                let body = """
                    {"bikeId":"\(bikes[0])","date":"\(time)","latitude":0,"longitude":0,"sightingId":"\(id)","kind":"enter",\
                    "stationId":"decoy","uuid":"\(Self.region)","major":\(clone.major),"minor":\(clone.minor),\
                    "firstSeen":"\(time)","lastSeen":"\(time)","count":1,"rssi":-50,"proximity":"near"}
                    """
                #expect(try await registry.post((id, body), key: stationKey).status == 201)
                #expect(try await Self.stats(database)["unverifiedSightings"] as? Int == 1)
                let after = try await testDatabase.settled()
                #expect(after.owed + after.delivered + after.abandoned == 4, "the clone owed nobody anything: \(after)")
            }
        }
    }

    static func stats(_ database: String) async throws -> [String: Any] {
        let run = try await BeacondRun.run(
            executable: BeacondRun.registryBinary.path, ["stats", "--json", "--database", database])
        return try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
    }
}
