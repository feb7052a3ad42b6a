import AsyncHTTPClient
import BeaconEngine
import BeaconRegistryClient
import BeaconTestSupport
import BeaconWire
import BikeRegistryCore
import BikeRegistryStore
import Crypto
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import StationSettings
import Synchronization
import Testing

@testable import BikeRegistryServer

/// Issue 54: a station (beacond's own refresher, client and cache) follows the real registry's list by its changes:
/// through a hundred versions (bikes reported and found, reports lapsing, rotating beacons' windows moving) it ends
/// with the list a station fetching it whole gets, bike for bike and by the same checksum; a station holding a list
/// the registry no longer holds gets the whole list; and two servers of one database send the same changes.
@Suite(.timeLimit(.minutes(20))) struct ListFollowTests {
    /// The region with no major, so that rotating beacons' identities, whatever their majors, are matched.
    static let region = BeaconRegion(uuid: BeaconRegion.findMyBike.uuid, major: nil)

    /// A station's refresher on `registry`, its cache in `directory`.
    struct Station {
        let refresher: MissingSetRefresher<ContinuousClock>
        let mailbox: MissingSetMailbox
        let client: HTTPClient
        let cache: BikeCache

        init(_ registry: RegistryHarness, key: String, directory: String) {
            let configuration = RegistryConfiguration(
                location: .http(base: registry.baseURL), authentication: .bearer, apiKey: APIKey(key),
                stationID: "ace", latitude: 51.5, longitude: -0.12)
            client = HTTPRegistry.makeHTTPClient(configuration)
            mailbox = MissingSetMailbox(MissingBikeSet(regions: [ListFollowTests.region]))
            cache = BikeCache(path: directory + "/missing-bikes.json")
            refresher = MissingSetRefresher(
                registry: HTTPRegistry(configuration: configuration, client: client), cache: cache,
                regions: [ListFollowTests.region], mailbox: mailbox, clock: ContinuousClock(),
                logger: Logger(label: "station", factory: { _ in SwiftLogNoOpLogHandler() }),
                wallClock: { Int64(Date().timeIntervalSince1970 * 1000) })
        }

        func stop() async { try? await client.shutdown() }

        /// The set in use, each bike with its identities, as one text: two sets are the same when their texts are.
        var held: String {
            var lines: [String] = []
            mailbox.latest.forEachBike { region, bike, identities in
                lines.append("\(region.uuid) \(bike) \(identities.sorted())")
            }
            return lines.sorted().joined(separator: "\n")
        }

        var checksum: String? { try? cache.load(regions: [ListFollowTests.region])?.checksum }
    }

    /// A registry on `clock` with the beacons' key file, bikes registered by their beacons (open) and rotating ones
    /// claimed by their codes, reports lapsing after 20 minutes of the clock.
    static func registry(
        _ store: StoreKind, directory: String, clock: TestTime, sharing: TestDatabase? = nil, metrics: Bool = false,
        configure: @escaping (inout RegistryServerConfiguration) -> Void = { _ in }
    ) async throws -> RegistryHarness {
        try await RegistryHarness(
            store, directory: directory, sharing: sharing, registrationsPerMinute: 10_000, metrics: metrics
        ) {
            $0.registrationsPerMinuteTotal = 10_000
            $0.now = clock.read
            $0.beaconKeys = try? BeaconKeySealer(keyFileText: RotatingRegistryTests.keyFile)
            $0.missingReports = MissingReportRules(lapse: 1_200, reminder: 600)
            // Bike 12 is reported again each time its report lapses (five times in the hundred versions), so that a
            // rotating bike is always listed: past the three reports a bike may have in 30 days it was refused, the
            // list then stood still for some versions, and the station's count of changes fell short at random.
            $0.missingReports.perWindow = 100
            $0.reportSweepInterval = .milliseconds(50)
            configure(&$0)
        }
    }

    /// A bike of each kind: fixed ones by their minors, rotating ones issued (each its own key) and claimed.
    static func bikes(_ registry: RegistryHarness, fixed: Int, rotating: Int) async throws -> [(
        id: String, token: String
    )] {
        var bikes: [(id: String, token: String)] = []
        for minor in 0..<fixed {
            let bike = try await registry.register(minor: 100 + minor)
            bikes.append((bike.id, bike.token))
        }
        for index in 0..<rotating {
            let key = (0..<16).map { UInt8(truncatingIfNeeded: index &* 37 &+ $0) }
            let code = try await RotatingRegistryTests.issue(registry, key: key)
            let claimed = try await registry.request(
                .POST, "/owner/bikes", body: RotatingRegistryTests.body(code: code))
            bikes.append(
                (try #require(claimed.object["id"] as? String), try #require(claimed.object["ownerToken"] as? String)))
        }
        return bikes
    }

    static func isMissing(_ registry: RegistryHarness, _ bike: (id: String, token: String)) async throws -> Bool {
        try await registry.request(.GET, "/owner/bikes/\(bike.id)", bearer: bike.token).object["missing"] as? Bool
            == true
    }

    /// Reports the bike missing, or found. `mayBeRefused`: a bike reported three times in 30 days may not be again
    /// (`MissingReportRules`), which a test that reports at random meets.
    static func report(
        _ registry: RegistryHarness, _ bike: (id: String, token: String), missing: Bool, mayBeRefused: Bool = false
    ) async throws {
        let answer = try await registry.request(
            .PATCH, "/owner/bikes/\(bike.id)", bearer: bike.token,
            body: missing ? #"{"missing":true}"# : #"{"missing":false,"outcome":"recovered"}"#)
        #expect(answer.status == 200 || (mayBeRefused && answer.status == 429), "\(answer.body)")
    }

    @Test(arguments: StoreKind.allCases) func aHundredVersionsFollowedByTheirChangesEndWhereTheWholeListIs(
        store: StoreKind
    ) async throws {
        let directory = try TemporaryDirectory("bike-registry-follow")
        defer { directory.remove() }
        let clock = TestTime()
        let registry = try await Self.registry(store, directory: directory.path, clock: clock)
        let following = Station(
            registry, key: try await registry.database.addStation(name: "Ace", latitude: 51.5, longitude: -0.12),
            directory: directory.path)
        try await withTeardown({
            await following.stop()
            await registry.stop()
        }) {
            let bikes = try await Self.bikes(registry, fixed: 12, rotating: 8)
            for index in [0, 1, 2, 12, 13, 14] { try await Self.report(registry, bikes[index], missing: true) }
            #expect(await following.refresher.refreshOnce())
            var random = SystemRandomNumberGenerator()
            for version in 1...100 {
                // A report made or closed most versions; the windows move (60 s periods); reports lapse as the clock
                // passes their 20 minutes.
                // Bike 12, rotating, is reported again whenever its report has lapsed, so that the list always has a
                // rotating bike and every move of the windows changes it.
                if !(try await Self.isMissing(registry, bikes[12])) {
                    try await Self.report(registry, bikes[12], missing: true, mayBeRefused: true)
                }
                if version % 4 != 0 {
                    let bike = bikes[([Int](0..<12) + [Int](13..<bikes.count)).randomElement(using: &random)!]
                    try await Self.report(
                        registry, bike, missing: !(try await Self.isMissing(registry, bike)), mayBeRefused: true)
                }
                clock.advance(by: 60)
                // The sweep's turn (every 50 ms), to lapse what is due by now.
                #expect(await registry.events.swept(asOf: clock.read()), "version \(version): no sweep")
                #expect(
                    await following.refresher.refreshOnce(),
                    "version \(version): \(following.refresher.status.lastError ?? "")")
            }
            // The last lapses the sweep owes at this moment made, and taken: the station fetching whole below must
            // see the list this one ends with.
            #expect(await registry.events.swept(asOf: clock.read()))
            #expect(await following.refresher.refreshOnce())
            let status = following.refresher.status
            #expect(status.wholeLists == 1 && status.changesApplied >= 95, "\(status)")
            #expect(status.changesRefused == nil, "\(status.changesRefused ?? "")")

            try FileManager.default.createDirectory(atPath: directory.file("whole"), withIntermediateDirectories: true)
            let whole = Station(
                registry, key: try await registry.database.addStation(name: "Bell", latitude: 51, longitude: 0),
                directory: directory.file("whole"))
            await withTeardown({ await whole.stop() }) {
                #expect(await whole.refresher.refreshOnce())
                #expect(whole.refresher.status.wholeLists == 1)
                #expect(whole.held == following.held, "the same bikes, each with the same identities")
                #expect(whole.checksum != nil && whole.checksum == following.checksum)
                #expect(following.mailbox.latest.count > 0)
            }
        }
    }

    /// A station that holds a list older than the registry keeps (two lists here) is sent the whole list.
    @Test func aListTheRegistryNoLongerHoldsGetsTheWholeList() async throws {
        let directory = try TemporaryDirectory("bike-registry-follow-old")
        defer { directory.remove() }
        let clock = TestTime()
        let registry = try await Self.registry(.sqlite, directory: directory.path, clock: clock) {
            $0.listHistoryVersions = 2
        }
        let station = Station(
            registry, key: try await registry.database.addStation(name: "Ace", latitude: 51.5, longitude: -0.12),
            directory: directory.path)
        try await withTeardown({
            await station.stop()
            await registry.stop()
        }) {
            let bikes = try await Self.bikes(registry, fixed: 4, rotating: 0)
            try await Self.report(registry, bikes[0], missing: true)
            #expect(await station.refresher.refreshOnce())
            try await Self.report(registry, bikes[1], missing: true)
            #expect(await station.refresher.refreshOnce())
            #expect(station.refresher.status.changesApplied == 1)
            // Two more lists served meanwhile to another station: the registry holds those two only.
            let other = try await registry.database.addStation(name: "Bell", latitude: 1, longitude: 2)
            for index in 2...3 {
                try await Self.report(registry, bikes[index], missing: true)
                #expect(try await registry.request(.GET, "/bikes", bearer: other).status == 200)
            }
            try await Self.report(registry, bikes[0], missing: false)
            #expect(await station.refresher.refreshOnce())
            #expect(station.refresher.status.wholeLists == 2 && station.refresher.status.changesApplied == 1)
            #expect(station.mailbox.latest.count == 3)
        }
    }

    /// Two servers of one PostgreSQL database, each having served the same two lists, answer the changes between them
    /// with the same bytes.
    @Test func twoServersOfOneDatabaseSendTheSameChanges() async throws {
        let directory = try TemporaryDirectory("bike-registry-follow-two")
        defer { directory.remove() }
        let clock = TestTime()
        let first = try await Self.registry(.postgres, directory: directory.path, clock: clock)
        let second = try await Self.registry(
            .postgres, directory: directory.path, clock: clock, sharing: first.testDatabase)
        try await withTeardown({
            await second.stopServing()
            await first.stop()
        }) {
            let key = try await first.database.addStation(name: "Ace", latitude: 51.5, longitude: -0.12)
            let bikes = try await Self.bikes(first, fixed: 6, rotating: 4)
            for index in [0, 1, 6, 7] { try await Self.report(first, bikes[index], missing: true) }
            func serve(_ server: RegistryHarness) async throws -> String {
                // Until the server has seen the database's latest version (it looks every 250 ms).
                var answer = try await server.request(.GET, "/bikes", bearer: key)
                for _ in 0..<100
                where answer.headers.first(name: "ETag")
                    != (try await first.request(.GET, "/bikes", bearer: key)).headers.first(name: "ETag")
                {
                    try await Task.sleep(for: .milliseconds(50))
                    answer = try await server.request(.GET, "/bikes", bearer: key)
                }
                return try #require(answer.headers.first(name: "ETag"))
            }
            let held = try await serve(first)
            #expect(try await serve(second) == held)
            try await Self.report(first, bikes[2], missing: true)
            try await Self.report(first, bikes[6], missing: false)
            clock.advance(by: 60)
            let current = try await serve(first)
            #expect(try await serve(second) == current && current != held)
            var bodies: [[UInt8]] = []
            for server in [first, second] {
                var request = HTTPClientRequest(url: server.baseURL + "/bikes?missing=true")
                request.headers.add(name: "Authorization", value: "Bearer \(key)")
                request.headers.add(name: "If-None-Match", value: held)
                request.headers.add(name: "A-IM", value: "bike-changes")
                let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
                #expect(response.status.code == 226 && response.headers.first(name: "IM") == "bike-changes")
                #expect(response.headers.first(name: "ETag") == current)
                bodies.append(Array(buffer: try await response.body.collect(upTo: 1 << 20)))
            }
            #expect(bodies[0] == bodies[1] && !bodies[0].isEmpty, "one version, one change")
        }
    }
}
