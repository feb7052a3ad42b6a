import AsyncHTTPClient
import BeaconEngine
import BeaconRegistryClient
import BeaconTestSupport
import BeaconWire
import BikeRegistryCore
import BikeRegistryStore
import Foundation
import Logging
import StationSettings
import Testing

@testable import BikeRegistryServer

/// Issue 54's goals, on the wire: what a station downloads (every byte the registry sends it, headers and
/// compression included, counted by a proxy between them) in a day of following the list every 5 minutes, with
/// missing rotating bikes whose windows move 96 times (900 s periods) and 20 reports made or closed: by its changes,
/// beside what the same refreshes would have cost taking each new list whole (its gzipped size and the same head
/// on the wire), and the information limit (4 bytes a new identity). And a
/// list of fixed beacons with one bike added costs a station under a kilobyte. The figures are printed for
/// BENCHMARKS.md; `ListBytesLargeTests` measures 10,000 bikes (its goal 20 MB a day).
///
/// A day of a thousand bikes is a few minutes of a debug build's work (the station's cache read and written at each
/// change, the registry's windows): a load test's, so it runs in the plain step, not under a sanitizer.
@Suite(.timeLimit(.minutes(20))) struct ListBytesTests {
    static let period = 900
    static let day: TimeInterval = 86_400
    static let poll: TimeInterval = 300

    /// The station through the proxy, its cache in `directory` (nil: none, so every new list is taken whole).
    static func station(_ proxy: CountingProxy, key: String, directory: String?) -> (
        MissingSetRefresher<ContinuousClock>, HTTPClient
    ) {
        let configuration = RegistryConfiguration(
            location: .http(base: "http://127.0.0.1:\(proxy.port)"), authentication: .bearer, apiKey: APIKey(key),
            stationID: "ace", latitude: 51.5, longitude: -0.12)
        let client = HTTPRegistry.makeHTTPClient(configuration)
        let refresher = MissingSetRefresher(
            registry: HTTPRegistry(configuration: configuration, client: client),
            cache: directory.map { BikeCache(path: $0 + "/missing-bikes.json") }, regions: [ListFollowTests.region],
            mailbox: MissingSetMailbox(MissingBikeSet(regions: [ListFollowTests.region])), clock: ContinuousClock(),
            logger: Logger(label: "station", factory: { _ in SwiftLogNoOpLogHandler() }),
            wallClock: { Int64(Date().timeIntervalSince1970 * 1000) })
        return (refresher, client)
    }

    /// `count` missing rotating bikes (each its own key), claimed and reported through the store.
    static func rotatingBikes(_ registry: RegistryHarness, count: Int, clock: TestTime) async throws {
        let sealer = try BeaconKeySealer(keyFileText: RotatingRegistryTests.keyFile)
        var codes: [String] = []
        var beacons: [NewRotatingBeacon] = []
        var random = SystemRandomNumberGenerator()
        for _ in 0..<count {
            let id = NewRotatingBeacon.newID()
            let code = ClaimCode.generate()
            // A key of its own, as issued: keys alike would list the same identities, which gzip would find.
            let key = (0..<16).map { _ in UInt8.random(in: 0...255, using: &random) }
            codes.append(code)
            beacons.append(
                NewRotatingBeacon(
                    id: id, uuid: RotatingRegistryTests.region, period: period,
                    sealedKey: sealer.seal(key, beacon: id), codeHash: ClaimCode.hash(code)!))
        }
        try await registry.database.addRotatingBeacons(beacons, now: clock.read())
        for code in codes {
            guard
                case .registered(let registration) = try await registry.database.claim(
                    codeHash: ClaimCode.hash(code)!, matching: BeaconMatch(),
                    bike: BikeDescription(make: "Triumph", model: "Street Triple", colour: "matt graphite"),
                    now: clock.read())
            else { throw HarnessError("claim refused") }
            _ = try await registry.database.update(
                id: registration.bike.id, ownerToken: registration.ownerToken, BikeChange(missing: true),
                rules: MissingReportRules(), now: clock.read())
        }
    }

    @Test(.disabled(if: LoadTests.areOff)) func aDayOfMovingWindowsCostsAStationItsChangesNotTheWholeListEachTime()
        async throws
    {
        try await Self.aDay(bikes: 1_000)
    }

    /// A day of following `bikes` missing rotating bikes: the bytes by changes, by whole lists, and the limit.
    static func aDay(bikes: Int) async throws {
        let directory = try TemporaryDirectory("bike-registry-list-bytes")
        defer { directory.remove() }
        let clock = TestTime()
        clock.set(Date(timeIntervalSince1970: 1_800_000_000))  // a moment a window begins at, for whole days
        let registry = try await ListFollowTests.registry(
            .sqlite, directory: directory.path, clock: clock, metrics: true
        ) { $0.missingReports = MissingReportRules() }
        let key = try await registry.database.addStation(name: "Ace", latitude: 51.5, longitude: -0.12)
        let following = try await CountingProxy(to: registry.port)
        let (station, client) = Self.station(following, key: key, directory: directory.path)
        try await withTeardown({
            try? await client.shutdown()
            await following.stop()
            await registry.stop()
        }) {
            try await Self.rotatingBikes(registry, count: bikes, clock: clock)
            let spare = try await ListFollowTests.bikes(registry, fixed: 20, rotating: 0)
            #expect(await station.refreshOnce())
            // The whole list, gzipped, on the wire: its body as the registry holds it, and the head beside it.
            let followingAtStart = following.downloaded
            let head = followingAtStart - (try await Self.gzippedList(registry))
            var byWholeLists = 0
            // 288 refreshes, 5 minutes apart; 20 reports made or closed, spread over the day.
            let polls = Int(Self.day / Self.poll)
            for poll in 1...polls {
                clock.advance(by: Self.poll)
                if poll % (polls / 20) == 0 {
                    let bike = spare[poll / (polls / 20) % spare.count]
                    try await ListFollowTests.report(
                        registry, bike, missing: !(try await ListFollowTests.isMissing(registry, bike)))
                }
                let (applied, before) = (station.status.changesApplied, following.downloaded)
                #expect(await station.refreshOnce(), "\(station.status.lastError ?? "")")
                // The same refresh, had the station taken each new list whole: that list, or the same 304.
                byWholeLists +=
                    station.status.changesApplied > applied
                    ? head + (try await Self.gzippedList(registry)) : following.downloaded - before
            }
            let byChanges = following.downloaded - followingAtStart
            let limit = bikes * 4 * Int(Self.day) / Self.period
            print(
                "list-bytes: \(bikes) rotating bikes, a day (\(polls) refreshes, \(Int(Self.day) / Self.period) window moves, 20 reports): by changes \(byChanges) bytes, whole lists \(byWholeLists) bytes, information limit \(limit) bytes; changes applied \(station.status.changesApplied), whole lists \(station.status.wholeLists)"
            )
            #expect(station.status.changesRefused == nil && station.status.wholeLists == 1)
            #expect(station.status.changesApplied >= 96)
            #expect(byChanges <= bikes * 2_000, "goal: 2 MB a day for 1,000 bikes, 20 MB for 10,000")
            #expect(byChanges * 5 < byWholeLists, "far under the whole lists: \(byChanges) against \(byWholeLists)")
        }
    }

    /// The list the registry serves now, gzipped, in bytes (its metrics).
    static func gzippedList(_ registry: RegistryHarness) async throws -> Int {
        let page = try await registry.metricsPage()
        return Int(
            try #require(RegistryMetricsTests.value(page, "bike_registry_station_list_bytes", ["encoding": "gzip"])))
    }

    /// A list of a thousand fixed beacons' bikes, and one more reported missing: the refresh after it costs a
    /// station under a kilobyte.
    @Test func aFixedListWithOneBikeAddedCostsUnderAKilobyte() async throws {
        let directory = try TemporaryDirectory("bike-registry-list-one")
        defer { directory.remove() }
        let clock = TestTime()
        let registry = try await ListFollowTests.registry(.sqlite, directory: directory.path, clock: clock)
        let key = try await registry.database.addStation(name: "Ace", latitude: 51.5, longitude: -0.12)
        let proxy = try await CountingProxy(to: registry.port)
        let (station, client) = Self.station(proxy, key: key, directory: directory.path)
        try await withTeardown({
            try? await client.shutdown()
            await proxy.stop()
            await registry.stop()
        }) {
            var bikes: [(id: String, token: String)] = []
            for minor in 0...1_000 {
                let bike = try await registry.database.register(
                    NewBike(
                        uuid: RotatingRegistryTests.region, major: 1, minor: minor, make: "Triumph",
                        model: "Bonneville T120", colour: "green"), now: clock.read())
                guard case .registered(let registration) = bike else { throw HarnessError("not registered") }
                bikes.append((registration.bike.id, registration.ownerToken))
                if minor == 1_000 { continue }  // the one added below
                _ = try await registry.database.update(
                    id: registration.bike.id, ownerToken: registration.ownerToken, BikeChange(missing: true),
                    rules: MissingReportRules(), now: clock.read())
            }
            #expect(await station.refreshOnce())
            let whole = proxy.downloaded
            try await ListFollowTests.report(registry, bikes[1_000], missing: true)
            let before = proxy.downloaded
            #expect(await station.refreshOnce())
            let added = proxy.downloaded - before
            print("list-bytes: 1,000 fixed beacons' bikes, whole \(whole) bytes; one bike added: \(added) bytes")
            #expect(station.status.changesApplied == 1)
            #expect(added < 1_024, "\(added) bytes")
        }
    }
}

/// The day of `ListBytesTests` with 10,000 missing rotating bikes (goal 20 MB): about half an hour of a debug build,
/// so only when asked (`BEACOND_LIST_BYTES_BIKES=10000`, or another count), with a time limit of its own.
@Suite(.timeLimit(.minutes(60))) struct ListBytesLargeTests {
    static let bikes = ProcessInfo.processInfo.environment["BEACOND_LIST_BYTES_BIKES"].flatMap(Int.init)

    @Test(.enabled(if: bikes != nil)) func aDayOfALargerList() async throws {
        try await ListBytesTests.aDay(bikes: Self.bikes ?? 10_000)
    }
}
