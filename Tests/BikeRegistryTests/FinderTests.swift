import BeaconTestSupport
import BikeRegistryCore
import BikeRegistryStore
import Foundation
import NIOHTTP1
import Testing

@testable import BikeRegistryServer

/// Issue 38's "found a beacon?": a lookup that says only whether a bike is registered and missing; a finder's report
/// that pauses the bike's messages at once (its sightings still stored), tells its owner once, and that the operator
/// ends by restoring or removing the bike; each limited per network; nothing of the finder's in the log.
@Suite(.timeLimit(.minutes(20))) struct FinderTests {
    static let region = "21EECF71-D5C7-4A00-9B90-27C94B5146EA"

    @Test(arguments: StoreKind.allCases) func aLookupSaysOnlyRegisteredAndMissing(store: StoreKind) async throws {
        let directory = try TemporaryDirectory("bike-registry-lookup")
        defer { directory.remove() }
        let registry = try await RegistryHarness(store, directory: directory.path, transport: .inProcess)
        try await withTeardown({ await registry.stop() }) {
            let missing = try await registry.registerMissing(minor: 1, webhook: "http://127.0.0.1:9/hook")
            _ = try await registry.register(minor: 2)
            for (minor, registered, isMissing) in [(1, true, true), (2, true, false), (3, false, false)] {
                let answer = try await registry.request(.GET, "/beacons/\(Self.region.lowercased())/1/\(minor)")
                #expect(answer.status == 200)
                #expect(answer.object.count == 2, "nothing but the two: \(answer.body)")
                #expect(
                    answer.object["registered"] as? Bool == registered && answer.object["missing"] as? Bool == isMissing
                )
                #expect(!answer.body.contains("bike_") && !answer.body.contains("Triumph"))
            }
            #expect(!(try await registry.request(.GET, "/beacons/\(Self.region)/1/1")).body.contains(missing.id))
            for bad in ["not-a-uuid/1/1", "\(Self.region)/65536/1", "\(Self.region)/1/-1"] {
                #expect(try await registry.request(.GET, "/beacons/\(bad)").status == 400, "\(bad)")
            }
        }
    }

    @Test(arguments: StoreKind.allCases) func aFindersReportPausesTheBikeUntilTheOperatorRestoresIt(store: StoreKind)
        async throws
    {
        let directory = try TemporaryDirectory("bike-registry-abuse")
        defer { directory.remove() }
        let receiver = NotificationReceiver()
        try await receiver.start()
        try await withTeardown({ await receiver.stop() }) {
            let registry = try await RegistryHarness(store, directory: directory.path, transport: .inProcess)
            try await withTeardown({ await registry.stop() }) {
                let key = try await registry.database.addStation(name: "Ace", latitude: 51.5, longitude: -0.2)
                let bike = try await registry.registerMissing(minor: 5, webhook: receiver.url("/hook"))
                func sighting() async throws -> Int {
                    let posted = try await registry.post(
                        RegistryHarness.sighting(bikeId: bike.id, firstSeen: ISOTime.format(Date()), minor: 5), key: key
                    )
                    #expect(posted.status == 201)
                    let counts = try await registry.database.notificationCounts()
                    return counts.owed + counts.delivered + counts.abandoned
                }
                let before = try await sighting()
                #expect(before == 1, "bike.seen owed")
                // Delivered and recorded so, before the report: a message in flight when the bike is paused still arrives.
                #expect(await registry.events.delivered(1))

                let reported = try await registry.request(
                    .POST, "/beacons/\(Self.region)/1/5/abuse",
                    body: #"{"message":"Found it taped under my saddle bag."}"#)
                #expect(reported.status == 202, "\(reported.body)")
                let paused = await receiver.waitFor(2)
                #expect(paused.last.map { $0.body.contains(#""type":"bike.paused""#) } == true, "\(paused.map(\.body))")
                // Sightings go on being stored; none owes its owner anything.
                let stored = try await registry.database.sightings(bikeId: bike.id).count
                #expect(try await sighting() == before + 1, "only bike.paused was added")
                #expect(try await registry.database.sightings(bikeId: bike.id).count == stored + 1)
                // A second report is kept, and tells the owner nothing more.
                #expect(try await registry.request(.POST, "/beacons/\(Self.region)/1/5/abuse").status == 202)
                #expect(try await sighting() == before + 1)
                #expect(try await registry.request(.POST, "/beacons/\(Self.region)/1/6/abuse").status == 404)

                // The operator's list and resolution, through the command.
                let listed = try await BikeRegistryRun.run(
                    ["abuse", "list", "--json", "--open", "--database", registry.testDatabase.location])
                let reports = listed.stdout.split(separator: "\n").compactMap {
                    try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
                }
                #expect(
                    reports.count == 2 && reports.allSatisfy { $0["bikeId"] as? String == bike.id }, "\(listed.stdout)")
                #expect(reports.contains { $0["message"] as? String == "Found it taped under my saddle bag." })
                let id = try #require(reports.first?["id"] as? String)
                let restored = try await BikeRegistryRun.run(
                    ["abuse", "resolve", id, "--restore", "--database", registry.testDatabase.location])
                #expect(restored.status == 0, "\(restored.stderr)")
                #expect(try await registry.database.abuseReports().allSatisfy { $0.resolution == .restored })
                // Told again: the next visit's bike.seen is owed and delivered.
                #expect(try await sighting() == before + 2)
                let told = await receiver.waitFor(3)
                #expect(told.last.map { $0.body.contains(#""type":"bike.seen""#) } == true)
                #expect(
                    try await BikeRegistryRun.run([
                        "abuse", "resolve", id, "--restore", "--database", registry.testDatabase.location,
                    ])
                    .status != 0, "resolved already")
            }
        }
    }

    @Test(arguments: StoreKind.allCases) func removingABikeDeletesItAndRevokesItsBeacon(store: StoreKind) async throws {
        let directory = try TemporaryDirectory("bike-registry-abuse-remove")
        defer { directory.remove() }
        let registry = try await RegistryHarness(store, directory: directory.path, transport: .inProcess) {
            $0.registration = .claimCode
        }
        try await withTeardown({ await registry.stop() }) {
            let code = ClaimCode.generate()
            _ = try await registry.database.issueBeacons(
                uuid: Self.region, major: 1, firstMinor: 40, codeHashes: [ClaimCode.hash(code)!], now: Date())
            let claimed = try await registry.request(.POST, "/owner/bikes", body: ClaimCodeTests.body(code: code))
            let token = try #require(claimed.object["ownerToken"] as? String)
            let id = try #require(claimed.object["id"] as? String)
            #expect(
                try await registry.request(.PATCH, "/owner/bikes/\(id)", bearer: token, body: #"{"missing":true}"#)
                    .status
                    == 200)
            #expect(try await registry.request(.POST, "/beacons/\(Self.region)/1/40/abuse").status == 202)
            let report = try #require(try await registry.database.abuseReports().first)
            #expect(try await registry.database.resolveAbuse(id: report.id, .removed, now: Date()))
            #expect(try await registry.request(.GET, "/owner/bikes/\(id)", bearer: token).status == 401)
            #expect(try await registry.database.beacons().first?.state == .revoked)
            #expect(
                try await registry.request(.GET, "/beacons/\(Self.region)/1/40").object["registered"] as? Bool == false)
            #expect(try await registry.database.missingBikes().bikes.isEmpty)
            // Its code claims nothing again.
            #expect(
                try await registry.request(.POST, "/owner/bikes", body: ClaimCodeTests.body(code: code)).status == 403)
        }
    }

    /// The access matrix over the new data: a station reads no report and no finder's report; an owner's token
    /// reaches its own bike's report only; a finder's answer holds nothing of either.
    @Test(arguments: StoreKind.allCases) func reportsReachOnlyTheirOwner(store: StoreKind) async throws {
        let directory = try TemporaryDirectory("bike-registry-report-access")
        defer { directory.remove() }
        let registry = try await RegistryHarness(store, directory: directory.path, transport: .inProcess)
        try await withTeardown({ await registry.stop() }) {
            let key = try await registry.database.addStation(name: "Ace", latitude: 51.5, longitude: -0.2)
            let mine = try await registry.register(minor: 31)
            let theirs = try await registry.register(minor: 32)
            let report = #"{"missing":true,"report":{"policeReference":"SECRET-REF-31","lastSeenPlace":"Hidden Lane"}}"#
            #expect(
                try await registry.request(.PATCH, "/owner/bikes/\(mine.id)", bearer: mine.token, body: report).status
                    == 200)
            #expect(
                try await registry.request(
                    .POST, "/beacons/\(Self.region)/1/31/abuse", body: #"{"message":"FINDER-NOTE"}"#
                )
                .status == 202)
            var answers: [RegistryClient.Answer] = []
            for (method, path, bearer, body) in [
                (HTTPMethod.GET, "/bikes?missing=true", key, nil), (.GET, "/owner/bikes/\(mine.id)", key, nil),
                (.GET, "/owner/bikes/\(mine.id)", theirs.token, nil),
                (.PATCH, "/owner/bikes/\(mine.id)", theirs.token, #"{"renew":true}"#),
                (.GET, "/owner/bikes/\(mine.id)/sightings", theirs.token, nil),
                (.GET, "/beacons/\(Self.region)/1/31", nil, nil), (.GET, "/beacons/\(Self.region)/1/31", key, nil),
            ] as [(HTTPMethod, String, String?, String?)] {
                let answer = try await registry.request(method, path, bearer: bearer, body: body)
                #expect(path.hasPrefix("/bikes") || path.hasPrefix("/beacons") || [401, 404].contains(answer.status))
                answers.append(answer)
            }
            for answer in answers {
                for secret in ["SECRET-REF-31", "Hidden Lane", "FINDER-NOTE", "abuse_", "report_"] {
                    #expect(!answer.body.contains(secret), "\(secret) in \(answer.body)")
                }
            }
            let own = try await registry.request(.GET, "/owner/bikes/\(mine.id)", bearer: mine.token)
            #expect(
                own.body.contains("SECRET-REF-31") && !own.body.contains("FINDER-NOTE"),
                "the owner's own, not the finder's"
            )
        }
    }

    /// What the contract allows a finder's message (schemathesis sent a tab, and was refused).
    @Test func aFindersMessageKeepsLineBreaksAndTabsAndNoOtherControlCharacter() throws {
        #expect(try Finder.checkedMessage("under the seat\r\n\tleft side") == "under the seat\r\n\tleft side")
        #expect(try Finder.checkedMessage(" \n ") == nil)
        #expect(throws: FieldError.self) { try Finder.checkedMessage("bell\u{7}") }
        #expect(throws: FieldError.self) { try Finder.checkedMessage(String(repeating: "a", count: 1_001)) }
        #expect(try Finder.checkedMessage(String(repeating: "é", count: 1_000))?.unicodeScalars.count == 1_000)
    }

    @Test func lookupsAndReportsAreLimitedPerNetwork() async throws {
        let directory = try TemporaryDirectory("bike-registry-finder-limits")
        defer { directory.remove() }
        let clock = TestTime()
        let registry = try await RegistryHarness(.sqlite, directory: directory.path) {
            $0.beaconLookupsPerMinute = 3
            $0.abuseReportsPerDay = 2
            $0.now = clock.read
        }
        try await withTeardown({ await registry.stop() }) {
            _ = try await registry.register(minor: 9)
            for _ in 0..<3 { #expect(try await registry.request(.GET, "/beacons/\(Self.region)/1/9").status == 200) }
            let fourth = try await registry.request(.GET, "/beacons/\(Self.region)/1/9")
            #expect(fourth.status == 429 && fourth.headers.first(name: "Retry-After") != nil)
            #expect(try await registry.request(.POST, "/beacons/\(Self.region)/1/8/abuse").status == 404, "counted too")
            #expect(try await registry.request(.POST, "/beacons/\(Self.region)/1/9/abuse").status == 202)
            #expect(try await registry.request(.POST, "/beacons/\(Self.region)/1/9/abuse").status == 429)
            clock.advance(by: 86_400)
            #expect(try await registry.request(.POST, "/beacons/\(Self.region)/1/9/abuse").status == 202)
        }
    }

    @Test func theFoundPageLooksUpAndReportsWithNothingOfTheFindersInTheLog() async throws {
        let directory = try TemporaryDirectory("bike-registry-found-page")
        defer { directory.remove() }
        let registry = try await RegistryHarness(.sqlite, directory: directory.path, transport: .inProcess)
        try await withTeardown({ await registry.stop() }) {
            _ = try await registry.registerMissing(minor: 12, webhook: "http://127.0.0.1:9/hook")
            let form = try await Page.get(registry, "/found")
            #expect(form.status == 200 && form.body.contains(#"name="minor""#))
            let csrf = Page.csrf(in: form.body) ?? ""
            let fields = ["csrf": csrf, "uuid": Self.region, "major": "1", "minor": "12"]
            let found = try await Page.post(registry, "/found", fields, cookie: form.cookie)
            #expect(found.status == 200 && found.body.contains("A bike is registered with this beacon"))
            #expect(found.body.contains("It is reported missing") && found.body.contains(#"id="abuse-button""#))
            let none = try await Page.post(
                registry, "/found", fields.merging(["minor": "13"]) { $1 }, cookie: form.cookie)
            #expect(none.body.contains("No bike is registered with this beacon") && !none.body.contains("abuse-button"))
            #expect(try await Page.post(registry, "/found", fields).status == 403, "no cookie, no lookup")
            let reported = try await Page.post(
                registry, "/found/abuse", fields.merging(["message": "In my coat pocket"]) { $1 }, cookie: form.cookie)
            #expect(reported.status == 202 && reported.body.contains("paused"))
            #expect(try await registry.database.abuseReports().first?.message == "In my coat pocket")

            #expect(
                LoggedPath(route: "/beacons/{uuid}/{major}/{minor}/abuse", path: "/beacons/\(Self.region)/1/12/abuse")
                    .description == "/beacons/-/-/-/abuse")
            #expect(
                LoggedPath(route: "/beacons/{uuid}/{major}/{minor}", path: "/beacons/\(Self.region)/1/12").description
                    == "/beacons/-/-/-")
        }
    }
}
