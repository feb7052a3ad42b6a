import AsyncHTTPClient
import BeaconDelivery
import BeaconEngine
import BeaconOutbox
import BeaconRegistryClient
import BeaconTestSupport
import BeaconWire
import Foundation
import ListChanges
import Logging
import RegistryTestServer
import StationSettings
import Testing

/// Serialized, and every wait for an outcome generous: see PosterTests.
@Suite(.serialized, .timeLimit(.minutes(20))) struct RefresherTests {
    /// The request deadline of the tests that wait one out (a station's is 20 s). The others keep long deadlines,
    /// which cost them nothing and spare an answer they expect a timeout of its own when ThreadSanitizer and the
    /// whole suite slow everything down.
    static let deadline: Duration = .milliseconds(300)
    static let bikes =
        #"[{"id":"b7","beaconMinor":7,"missing":true,"deviceToken":"fcm:OWNER-SECRET"},{"id":"b8","beaconMinor":8,"missing":false}]"#

    struct Rig {
        var refresher: MissingSetRefresher<ContinuousClock>
        var mailbox: MissingSetMailbox
        var client: HTTPClient
        var cachePath: String
    }

    /// A refresher on `server`'s registry (or `base`) with these deadlines. (The HTTP client keeps trying to connect
    /// to a port nothing listens on until the connection deadline.)
    func withRefresher(
        _ server: RegistryServer, directory: TemporaryDirectory, base: String? = nil,
        requestDeadline: Duration = .seconds(30), connectDeadline: Duration = .seconds(30),
        logger given: Logger? = nil, _ body: (Rig) async throws -> Void
    ) async throws {
        var configuration = httpConfiguration(server)
        configuration.connectTimeout = connectDeadline
        configuration.requestTimeout = requestDeadline
        configuration.listTimeout = requestDeadline
        if let base { configuration.location = .http(base: base) }
        let client = HTTPRegistry.makeHTTPClient(configuration)
        let mailbox = MissingSetMailbox(MissingBikeSet(regions: [.findMyBike]))
        let (captured, handler) = capturingLogger()
        let logger = given ?? captured
        let cachePath = directory.file("missing-bikes.json")
        let refresher = MissingSetRefresher(
            registry: HTTPRegistry(configuration: configuration, client: client), cache: BikeCache(path: cachePath),
            regions: [.findMyBike], mailbox: mailbox, clock: ContinuousClock(), logger: logger, wallClock: milliseconds)
        do {
            try await body(Rig(refresher: refresher, mailbox: mailbox, client: client, cachePath: cachePath))
        } catch {
            try? await client.shutdown()
            throw error
        }
        try await client.shutdown()
        #expect(!logText(handler).contains(secretKey))
        #expect(!logText(handler).contains("OWNER-SECRET"))
    }

    @Test func refreshesConditionallyAndKeepsTheSetThroughBadAnswers() async throws {
        let server = RegistryServer()
        try await server.start()
        try await withTeardown({ await server.stop() }) {
            server.requireKey(secretKey)
            server.setBikes(Self.bikes)
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            try await withRefresher(server, directory: directory) { rig in
                #expect(await rig.refresher.refreshOnce(), "\(rig.refresher.status.lastError ?? "")")
                #expect(rig.mailbox.latest.count == 1 && rig.mailbox.latest.contains(region: 0, major: 1, minor: 7))
                #expect(rig.refresher.status.source == .registry && rig.refresher.status.missing == 1)
                #expect(await rig.refresher.refreshOnce(), "a 304 is a success")
                #expect(server.requests.last?.query == "missing=true&key=\(secretKey)")
                // Each bad answer is an error, and the set stays.
                // (A slow answer is aSlowOrTrickledAnswerEndsAtTheRequestsDeadline's.)
                server.inject([.garbage, .oversized(bytes: 100_000), .status(500), .status(401), .dropConnection])
                for expected in ["not valid JSON", "larger than", "HTTP 500", "HTTP 401", "connection"] {
                    #expect(await rig.refresher.refreshOnce() == false)
                    let error = rig.refresher.status.lastError ?? ""
                    #expect(error.contains(expected), "\(error)")
                    #expect(error.contains("key=REDACTED") && !error.contains(secretKey))
                    #expect(rig.mailbox.latest.count == 1)
                }
                #expect(rig.refresher.status.consecutiveFailures == 5)
                // A changed list gets through again.
                server.setBikes(#"[{"id":"b9","beaconMinor":9,"missing":true}]"#)
                #expect(await rig.refresher.refreshOnce())
                #expect(rig.mailbox.latest.contains(region: 0, major: 1, minor: 9) && rig.mailbox.latest.count == 1)
                #expect(rig.refresher.status.lastError == nil)
            }
            // The cache holds what beacond uses and nothing of the owner's.
            let cache = try String(contentsOfFile: directory.file("missing-bikes.json"), encoding: .utf8)
            #expect(cache.contains("b9") && !cache.contains("OWNER-SECRET") && !cache.contains(secretKey))
        }
    }

    /// The list comes gzip-compressed when the station asks (it always does), and is inflated within a bound: a few
    /// kilobytes that would inflate to 20 MiB are refused as they come, and so is a stream cut short; each says why,
    /// and the set in use and the cache stay.
    @Test func aCompressedListIsTakenAndABombOrATruncatedStreamIsRefused() async throws {
        let server = RegistryServer()
        try await server.start()
        try await withTeardown({ await server.stop() }) {
            server.requireKey(secretKey)
            server.setBikes(Self.bikes)
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            try await withRefresher(server, directory: directory) { rig in
                #expect(await rig.refresher.refreshOnce(), "\(rig.refresher.status.lastError ?? "")")
                #expect(server.listEncodings == ["gzip"], "asked for, and inflated")
                #expect(rig.mailbox.latest.contains(region: 0, major: 1, minor: 7) && rig.mailbox.latest.count == 1)
                let cached = try String(contentsOfFile: rig.cachePath, encoding: .utf8)
                server.setBikes(#"[{"id":"b9","beaconMinor":9,"missing":true}]"#)
                server.inject([.gzipBomb(inflated: 20 << 20), .truncatedGzip])
                for expected in ["inflates past \(HTTPRegistry.inflationRatio) times", "truncated"] {
                    #expect(await rig.refresher.refreshOnce() == false)
                    let error = rig.refresher.status.lastError ?? ""
                    #expect(error.contains(expected), "\(error)")
                    #expect(rig.mailbox.latest.contains(region: 0, major: 1, minor: 7) && rig.mailbox.latest.count == 1)
                    #expect(try String(contentsOfFile: rig.cachePath, encoding: .utf8) == cached, "the cache stays")
                }
                #expect(await rig.refresher.refreshOnce(), "the next good list is taken")
                #expect(rig.mailbox.latest.contains(region: 0, major: 1, minor: 9))
            }
        }
    }

    /// Once the cache holds the list whole, the station asks for the changes since it (`A-IM`), applies them and checks
    /// the list they make against the registry's checksum: right, they are taken; altered on the way, the station
    /// says so (log and status) and fetches the whole list at once.
    @Test func changesAreAppliedAndOnesThatDoNotAddUpFetchTheWholeList() async throws {
        let server = RegistryServer()
        try await server.start()
        try await withTeardown({ await server.stop() }) {
            server.requireKey(secretKey)
            let first = #"[{"id":"b7","beaconMinor":7,"missing":true},{"id":"b8","beaconMinor":8,"missing":true}]"#
            let second = #"[{"id":"b7","beaconMinor":7,"missing":true},{"id":"b9","beaconMinor":9,"missing":true}]"#
            let third = #"[{"id":"b9","beaconMinor":9,"missing":true},{"id":"b10","beaconMinor":10,"missing":true}]"#
            func entries(_ json: String) throws -> [ListedEntry] {
                try JSONDecoder().decode([ListedEntry].self, from: Data(json.utf8))
            }
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let (logger, handler) = capturingLogger()
            try await withRefresher(server, directory: directory, logger: logger) { rig in
                server.setBikes(first)
                #expect(await rig.refresher.refreshOnce())
                #expect(server.instanceManipulations == [nil], "no list held whole yet: the whole list asked for")
                let held = server.etag
                server.setBikes(second)
                let right = ListChanges.between(try entries(first), try entries(second), version: server.etag)
                server.setChanges(from: held, body: String(decoding: try JSONEncoder().encode(right), as: UTF8.self))
                #expect(await rig.refresher.refreshOnce(), "\(rig.refresher.status.lastError ?? "")")
                #expect(server.instanceManipulations.last == "bike-changes")
                #expect(server.listEncodings.count == 1, "taken by its changes, not whole")
                #expect(rig.refresher.status.changesApplied == 1 && rig.refresher.status.changesRefused == nil)
                #expect(rig.mailbox.latest.contains(region: 0, major: 1, minor: 9))
                #expect(!rig.mailbox.latest.contains(region: 0, major: 1, minor: 8))

                // The next changes altered on the way: an added bike's minor is not what the registry listed.
                let heldNow = server.etag
                server.setBikes(third)
                var altered = ListChanges.between(try entries(second), try entries(third), version: server.etag)
                altered.added[0].minor += 1
                server.setChanges(
                    from: heldNow, body: String(decoding: try JSONEncoder().encode(altered), as: UTF8.self))
                #expect(await rig.refresher.refreshOnce(), "\(rig.refresher.status.lastError ?? "")")
                let status = rig.refresher.status
                #expect(status.changesRefused?.contains("did not add up") == true, "\(status.changesRefused ?? "")")
                #expect(status.wholeLists == 2 && status.changesApplied == 1)
                #expect(server.listEncodings.count == 2, "the whole list fetched at once")
                #expect(Array(server.instanceManipulations.suffix(2)) == ["bike-changes", nil])
                #expect(logText(handler).contains("did not add up"))
                #expect(rig.mailbox.latest.contains(region: 0, major: 1, minor: 10) && rig.mailbox.latest.count == 2)
                // And the cache is the registry's list, whole, again: the next changes apply.
                let cached = try #require(try BikeCache(path: rig.cachePath).load(regions: [.findMyBike]))
                var checksum = ListChecksum()
                for entry in try entries(third) { checksum.add(entry) }
                #expect(cached.checksum == checksum.description)

                // Changes larger than a station decodes whole (2 MiB): the whole list is asked for at once instead.
                let heldLast = server.etag
                server.setBikes(first)
                server.setChanges(
                    from: heldLast, body: #"{"padding":""# + String(repeating: "x", count: 3 << 20) + #""}"#)
                #expect(await rig.refresher.refreshOnce(), "\(rig.refresher.status.lastError ?? "")")
                #expect(rig.refresher.status.wholeLists == 3 && server.listEncodings.count == 3)
                #expect(rig.mailbox.latest.contains(region: 0, major: 1, minor: 8))
            }
        }
    }

    /// An answer that does not come, and one whose headers come at once and whose body then comes a byte every
    /// 50 ms (each read quick, the whole answer not for 50 s): each request ends at its deadline (300 ms) with an
    /// error, and the set in use stays.
    @Test func aSlowOrTrickledAnswerEndsAtTheRequestsDeadline() async throws {
        let server = RegistryServer()
        try await server.start()
        try await withTeardown({ await server.stop() }) {
            server.requireKey(secretKey)
            server.setBikes(Self.bikes)
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            try await withRefresher(server, directory: directory) { rig in #expect(await rig.refresher.refreshOnce()) }
            server.setBikes(#"[{"id":"b9","beaconMinor":9,"missing":true}]"#)
            try await withRefresher(server, directory: directory, requestDeadline: Self.deadline) { rig in
                #expect(rig.refresher.loadCache())
                // Neither ends before the test does: only the deadline can end them.
                server.inject([.unanswered, .trickle(every: .milliseconds(50), bytes: 1_000)])
                for _ in 0..<2 {
                    let started = ContinuousClock.now
                    #expect(await rig.refresher.refreshOnce() == false)
                    let took = ContinuousClock.now - started
                    #expect(took >= Self.deadline * 0.9, "the refresh took \(took)")
                    let error = rig.refresher.status.lastError ?? ""
                    #expect(error.contains("timed out"), "\(error)")
                    #expect(rig.mailbox.latest.contains(region: 0, major: 1, minor: 7), "\(rig.mailbox.latest.bikes)")
                }
            }
        }
    }

    /// A first start waits for a slow registry only so long; the request is not abandoned, and the refresher's loop
    /// takes its list as its first result instead of asking again.
    @Test func aSlowFirstListIsWaitedForBrieflyAndStillTaken() async throws {
        let server = RegistryServer()
        try await server.start()
        try await withTeardown({ await server.stop() }) {
            server.requireKey(secretKey)
            server.setBikes(Self.bikes)
            server.hold()  // unanswered past the first start's patience, and answered inside the request's deadline
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            try await withRefresher(server, directory: directory) { rig in
                let started = ContinuousClock.now
                #expect(await rig.refresher.firstRefresh(patience: .milliseconds(200)) == false)
                let waited = ContinuousClock.now - started
                // (The request is held until released below: returning at all is returning at the patience.)
                #expect(waited >= .milliseconds(200), "waited \(waited)")
                #expect(rig.mailbox.latest.count == 0)
                let loop = Task { await rig.refresher.run() }
                defer { loop.cancel() }
                server.release()
                #expect(
                    await eventually(within: 60) { rig.mailbox.latest.contains(region: 0, major: 1, minor: 7) },
                    "the first request's list never arrived")
                #expect(
                    server.requests.filter { $0.path == "/bikes" }.count == 1,
                    "the loop asked again instead of taking the first answer")
                // A quick registry: the first start's attempt answers inside its patience.
                #expect(await rig.refresher.firstRefresh(patience: .seconds(5)))
            }
        }
    }

    /// A list whose entries are mostly of the wrong type does not replace a good set: it is kept, and status says
    /// why and how many were skipped.
    @Test func aMostlyUnusableListDoesNotReplaceAGoodSet() async throws {
        let server = RegistryServer()
        try await server.start()
        try await withTeardown({ await server.stop() }) {
            server.requireKey(secretKey)
            server.setBikes(Self.bikes)
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            try await withRefresher(server, directory: directory) { rig in
                #expect(await rig.refresher.refreshOnce())
                let garbage = (0..<10).map { #"{"id":\#($0),"beaconMinor":"seven","missing":"yes"}"# }
                server.setBikes(
                    "[" + (garbage + [#"{"id":"b9","beaconMinor":9,"missing":true}"#]).joined(separator: ",") + "]")
                #expect(await rig.refresher.refreshOnce() == false)
                #expect(
                    rig.mailbox.latest.contains(region: 0, major: 1, minor: 7) && rig.mailbox.latest.count == 1,
                    "the good set stays")
                let status = rig.refresher.status
                #expect(
                    status.refusedList
                        == "the registry's list had 10 of its 11 entries unusable; the previous list of 1 bikes is kept"
                )
                #expect(status.skippedEntries == 10)
                // A good list again is taken, and the complaint goes.
                server.setBikes(#"[{"id":"b9","beaconMinor":9,"missing":true}]"#)
                #expect(await rig.refresher.refreshOnce())
                #expect(
                    rig.mailbox.latest.contains(region: 0, major: 1, minor: 9)
                        && rig.refresher.status.refusedList == nil)
            }
        }
    }

    /// The cache holds exactly the set, however odd its text, and reads back through the same streaming reader.
    @Test func theCacheReadsBackTheSetItWrote() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let regions = [BeaconRegion.findMyBike, BeaconRegion("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!]
        let entries: [BikeList.Entry] = [
            .init(
                id: #"quote " back \ slash"#, minor: 1, missing: true, make: "tab\there", model: "new\nline",
                colour: "caf\u{e9} 🚲"),
            .init(
                id: "control \u{1}\u{1f}", minor: 65_535, missing: true, uuid: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0",
                major: 7),
            .init(id: "parked", minor: 2, missing: false),
        ]
        let set = MissingBikeSet(list: BikeList(entries: entries), regions: regions)
        let cache = BikeCache(path: directory.file("missing-bikes.json"))
        try cache.store(
            .init(
                set: set, validators: CacheValidators(etag: #""v\"1""#), fetchedAt: 1_700_000_000_000,
                source: "https://r/api"))
        let loaded = try #require(try cache.load(regions: regions))
        #expect(loaded.set.bikes == set.bikes)
        #expect(loaded.set.count == 2)
        #expect(
            loaded.validators.etag == #""v\"1""# && loaded.fetchedAt == 1_700_000_000_000
                && loaded.source == "https://r/api")
    }

    @Test func refreshNowWakesTheTimerAtOnce() async throws {
        let server = RegistryServer()
        try await server.start()
        try await withTeardown({ await server.stop() }) {
            server.setBikes(Self.bikes)
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            try await withRefresher(server, directory: directory) { rig in
                let task = Task { await rig.refresher.run() }  // 5 minutes between refreshes
                #expect(await eventually(within: 60) { server.requestCount == 1 })
                server.setBikes(#"[{"id":"b9","beaconMinor":9,"missing":true}]"#)
                rig.refresher.refreshNow()
                #expect(await eventually(within: 60) { rig.mailbox.latest.contains(region: 0, major: 1, minor: 9) })
                let next = try #require(rig.refresher.status.nextRefresh)
                let delay = Double(next - milliseconds()) / 1000
                #expect(delay > 230 && delay < 361, "5 minutes ± 20 %: \(delay) s")
                task.cancel()
                await task.value
            }
        }
    }

    @Test func anotherRegistrysCachedListIsNotUsed() async throws {
        let first = RegistryServer()
        try await first.start()
        first.setBikes(Self.bikes)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try await withRefresher(first, directory: directory) { rig in #expect(await rig.refresher.refreshOnce()) }
        await first.stop()
        // The station is pointed at another registry (its own ids for other bikes): the first one's list must not
        // be matched and reported under its ids until the new one answers.
        let second = RegistryServer()
        try await second.start()
        try await withTeardown({ await second.stop() }) {
            second.setBikes(#"[{"id":"other-b9","beaconMinor":9,"missing":true}]"#)
            try await withRefresher(second, directory: directory) { rig in
                #expect(rig.refresher.loadCache() == false, "another registry's cache is not loaded")
                #expect(rig.mailbox.latest.count == 0)
                #expect(await rig.refresher.refreshOnce())
                #expect(
                    rig.mailbox.latest.contains(region: 0, major: 1, minor: 9)
                        && !rig.mailbox.latest.contains(region: 0, major: 1, minor: 7))
            }
            // Its own cache, once written, is used.
            try await withRefresher(second, directory: directory) { rig in #expect(rig.refresher.loadCache()) }
        }
    }

    @Test func noNetworkAndNoCacheThenAStaleCacheStillDetects() async throws {
        let server = RegistryServer()
        try await server.start()
        server.setBikes(Self.bikes)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // Fill the cache while the registry is up.
        try await withRefresher(server, directory: directory) { rig in #expect(await rig.refresher.refreshOnce()) }
        let deadBase = server.baseURL
        await server.stop()

        // No network, no cache: nothing to go on, and status says so.
        let empty = try TemporaryDirectory()
        defer { empty.remove() }
        try await withRefresher(server, directory: empty, base: deadBase, connectDeadline: .milliseconds(50)) { rig in
            #expect(rig.refresher.loadCache() == false)
            #expect(await rig.refresher.refreshOnce() == false)
            #expect(rig.refresher.status.source == .none && rig.refresher.status.lastError != nil)
            #expect(rig.mailbox.latest.count == 0)
        }

        // No network, a stale cache: the cached set is used, its age known.
        try await withRefresher(server, directory: directory, base: deadBase, connectDeadline: .milliseconds(50)) {
            rig in
            #expect(rig.refresher.loadCache())
            #expect(await rig.refresher.refreshOnce() == false)
            let status = rig.refresher.status
            #expect(status.source == .cache && status.missing == 1 && status.lastError != nil)
            let age = try #require(status.age(now: milliseconds() + 3_600_000))
            #expect(age >= .seconds(3_600))
            // Detection works from it.
            var engine = RangingEngine<CaptureTime>(
                configuration: EngineConfiguration(), missing: rig.mailbox.latest, startingAt: EngineHarness.origin)
            var sightings: [Sighting] = []
            let advert = EngineHarness.advert(minor: 7, at: 0)
            engine.observe(advert, at: advert.time, into: &sightings)
            #expect(sightings.map(\.bikeID) == ["b7"])
        }
    }

    @Test func aCorruptCacheIsIgnoredWithAnError() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("missing-bikes.json")
        try Data("{\"version\":1,\"bikes\":[{\"id\":".utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: RegistryError.self) { try BikeCache(path: path).load(regions: [.findMyBike]) }
        #expect(try BikeCache(path: directory.file("absent.json")).load(regions: [.findMyBike]) == nil)
    }

    @Test func fileRegistryReadsTheListWhenItChangesAndAppendsSightings() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let bikes = directory.file("bikes.json")
        let out = directory.file("sightings.jsonl")
        try Data(Self.bikes.utf8).write(to: URL(fileURLWithPath: bikes))
        let registry = FileRegistry(bikes: bikes, sightings: out)
        guard
            case .list(let list, let validators, _) = try await registry.fetchMissing(
                validators: nil, regions: [.findMyBike])
        else {
            Issue.record("expected a list")
            return
        }
        #expect(list.bikes.map(\.id) == ["b7"] && list.statistics.notMissing == 1)
        guard case .notModified = try await registry.fetchMissing(validators: validators, regions: [.findMyBike]) else {
            Issue.record("unchanged file should be not modified")
            return
        }
        try Data(#"[{"id":"b9","beaconMinor":9,"missing":true}]"#.utf8).write(to: URL(fileURLWithPath: bikes))
        guard
            case .list(let changed, _, _) = try await registry.fetchMissing(
                validators: validators, regions: [.findMyBike])
        else {
            Issue.record("a changed file should be re-read")
            return
        }
        #expect(changed.bikes.map(\.id) == ["b9"])
        for item in items(makeSightings(2)) {
            #expect(await registry.deliver(try #require(OutgoingSighting(stored: item.body))) == .delivered)
        }
        let lines = try String(contentsOfFile: out, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 4 && lines.allSatisfy { FlatJSON.object(String($0))?["sightingId"] != nil })
        try Data("not json".utf8).write(to: URL(fileURLWithPath: bikes))
        await #expect(throws: RegistryError.self) {
            try await registry.fetchMissing(validators: nil, regions: [.findMyBike])
        }
    }
}
