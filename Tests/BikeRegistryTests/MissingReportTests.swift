import BeaconTestSupport
import BikeRegistryCore
import BikeRegistryStore
import Foundation
import NIOHTTP1
import Testing

@testable import BikeRegistryServer

/// Issue 38's missing reports: a report with its details, that lapses unless renewed (one reminder a renewal, one
/// message at the lapse, and the bike off the stations' list), at most 3 a bike in any 30 days, closed as recovered
/// or withdrawn, and counted for the operator. Every time rule on the registry's clock, moved by the test: 30 days
/// pass in milliseconds, nothing sleeps.
@Suite(.timeLimit(.minutes(20))) struct MissingReportTests {
    static let day: TimeInterval = 86_400

    @Test(arguments: StoreKind.allCases) func aReportLapsesUnlessRenewedWithOneReminderEach(store: StoreKind)
        async throws
    {
        let directory = try TemporaryDirectory("bike-registry-reports")
        defer { directory.remove() }
        let clock = TestTime()
        let receiver = NotificationReceiver()
        try await receiver.start()
        try await withTeardown({ await receiver.stop() }) {
            let registry = try await RegistryHarness(store, directory: directory.path, transport: .inProcess) {
                $0.now = clock.read
                $0.reportSweepInterval = .seconds(3_600)  // swept by the test, on its clock
                $0.notificationIdleWait = .milliseconds(100)  // what the test's sweeps made due, delivered soon
            }
            try await withTeardown({ await registry.stop() }) {
                let key = try await registry.database.addStation(name: "Ace", latitude: 51.5, longitude: -0.2)
                let bike = try await registry.register(minor: 101)
                let made = clock.read()
                let reported = try await registry.request(
                    .PATCH, "/owner/bikes/\(bike.id)", bearer: bike.token,
                    body: """
                        {"missing":true,"report":{"lastSeenAt":"2026-11-20T18:00:00Z","lastSeenPlace":"Camden Lock","policeReference":"CAD 1234/20NOV","policeForce":"Metropolitan Police"},\
                        "notify":{"webhook":"\(receiver.url("/hook"))"}}
                        """)
                #expect(reported.status == 200, "\(reported.body)")
                let report = reported.object["report"] as? [String: Any] ?? [:]
                #expect(report["policeReference"] as? String == "CAD 1234/20NOV")
                #expect(report["lastSeenPlace"] as? String == "Camden Lock" && report["lastSeenAt"] as? String != nil)
                #expect(report["lapsesAt"] as? String == ISOTime.format(made.addingTimeInterval(30 * Self.day)))
                #expect(try await Self.listed(registry, key: key) == [bike.id])

                let rules = MissingReportRules()
                func sweep(at days: Double) async throws -> ReportSweep {
                    clock.set(made.addingTimeInterval(days * Self.day))
                    return try await registry.database.sweepReports(rules: rules, now: clock.read())
                }
                #expect(try await sweep(at: 26.9) == ReportSweep(reminded: 0, lapsed: 0), "not yet within 3 days")
                #expect(try await sweep(at: 27.1) == ReportSweep(reminded: 1, lapsed: 0))
                #expect(try await sweep(at: 27.5) == ReportSweep(reminded: 0, lapsed: 0), "reminded once")
                // "Still missing": the lapse counts from now, and the next reminder comes before the new lapse.
                clock.set(made.addingTimeInterval(28 * Self.day))
                let renewed = try await registry.request(
                    .PATCH, "/owner/bikes/\(bike.id)", bearer: bike.token, body: #"{"renew":true}"#)
                #expect(
                    (renewed.object["report"] as? [String: Any])?["lapsesAt"] as? String
                        == ISOTime.format(made.addingTimeInterval(58 * Self.day)), "\(renewed.body)")
                #expect(try await sweep(at: 54.9) == ReportSweep(reminded: 0, lapsed: 0))
                #expect(
                    try await sweep(at: 55.1) == ReportSweep(reminded: 1, lapsed: 0), "reminded again after renewal")
                #expect(try await sweep(at: 58.00001) == ReportSweep(reminded: 0, lapsed: 1))
                #expect(try await sweep(at: 59) == ReportSweep(reminded: 0, lapsed: 0), "lapsed once")

                let after = try await registry.request(.GET, "/owner/bikes/\(bike.id)", bearer: bike.token)
                #expect(after.object["missing"] as? Bool == false && after.object["report"] is NSNull, "\(after.body)")
                // Off the stations' list once the server's copy has caught up (it looks every 250 ms).
                #expect(await registry.events.list(atLeast: try await registry.database.versions().list))
                #expect(try await Self.listed(registry, key: key) == [])
                // The owner was told each time, signed as bike.seen is, in order: two reminders, then the lapse.
                let messages = await receiver.waitFor(3)
                let bodies = messages.compactMap {
                    try? JSONSerialization.jsonObject(with: Data($0.body.utf8)) as? [String: Any]
                }
                #expect(
                    bodies.map { $0["type"] as? String ?? "" }
                        == ["bike.missing_lapsing", "bike.missing_lapsing", "bike.missing_lapsed"], "\(bodies)")
                #expect(
                    bodies.allSatisfy {
                        ($0["data"] as? [String: Any])?["bikeId"] as? String == bike.id
                            && ($0["data"] as? [String: Any])?["lapsesAt"] is String
                    })
                #expect(messages.allSatisfy { $0.headers["webhook-signature"]?.hasPrefix("v1,") == true })
                #expect(messages.count == 3, "nothing else was sent")
                // A renewal without a report is refused, and says so.
                let nothing = try await registry.request(
                    .PATCH, "/owner/bikes/\(bike.id)", bearer: bike.token, body: #"{"renew":true}"#)
                #expect(nothing.status == 409, "\(nothing.body)")
            }
        }
    }

    @Test(arguments: StoreKind.allCases) func aFourthReportInThirtyDaysIsRefusedWithWhenTheNextMayBe(
        store: StoreKind
    ) async throws {
        let directory = try TemporaryDirectory("bike-registry-report-limit")
        defer { directory.remove() }
        let clock = TestTime()
        let registry = try await RegistryHarness(store, directory: directory.path, transport: .inProcess) {
            $0.now = clock.read
        }
        try await withTeardown({ await registry.stop() }) {
            let bike = try await registry.register(minor: 7)
            let first = clock.read()
            func report(_ missing: Bool, outcome: String? = nil) async throws -> RegistryClient.Answer {
                let body = outcome.map { #"{"missing":false,"outcome":"\#($0)"}"# } ?? #"{"missing":\#(missing)}"#
                return try await registry.request(.PATCH, "/owner/bikes/\(bike.id)", bearer: bike.token, body: body)
            }
            for round in 0..<3 {
                clock.set(first.addingTimeInterval(Double(round) * 2 * Self.day))
                #expect(try await report(true).status == 200)
                #expect(try await report(false, outcome: "withdrawn").status == 200)
            }
            clock.set(first.addingTimeInterval(10 * Self.day))
            let fourth = try await report(true)
            #expect(fourth.status == 429, "\(fourth.body)")
            #expect(
                fourth.body.contains("at most 3 times in 30 days")
                    && fourth.body.contains(ISOTime.readable(first.addingTimeInterval(30 * Self.day))))
            // Twenty days, rounded up (a time read back from the database may be a hair later than the one written).
            let retryAfter = fourth.headers.first(name: "Retry-After").flatMap(Int.init) ?? 0
            #expect((Int(20 * Self.day)...Int(20 * Self.day) + 1).contains(retryAfter), "\(retryAfter)")
            let unchanged = try await registry.request(.GET, "/owner/bikes/\(bike.id)", bearer: bike.token)
            #expect(unchanged.object["missing"] as? Bool == false, "refused whole")
            // Thirty days after the first, one more may be made.
            clock.set(first.addingTimeInterval(30 * Self.day))
            #expect(try await report(true).status == 200)
        }
    }

    @Test(arguments: StoreKind.allCases) func closingsKeepTheirOutcomeAndTheStatsCountThem(store: StoreKind)
        async throws
    {
        let directory = try TemporaryDirectory("bike-registry-report-stats")
        defer { directory.remove() }
        let clock = TestTime()
        let registry = try await RegistryHarness(store, directory: directory.path, transport: .inProcess) {
            $0.now = clock.read
        }
        try await withTeardown({ await registry.stop() }) {
            let key = try await registry.database.addStation(name: "Ace", latitude: 51.5, longitude: -0.2)
            let station = try #require(try await registry.database.station(key: key))
            let start = clock.read()
            var bikes: [(id: String, token: String)] = []
            for minor in 1...4 {
                let bike = try await registry.register(minor: minor)
                bikes.append((bike.id, bike.token))
                #expect(
                    try await registry.request(
                        .PATCH, "/owner/bikes/\(bike.id)", bearer: bike.token, body: #"{"missing":true}"#
                    ).status == 200)
            }
            // Bikes 1 and 2 are heard, 10 and 30 minutes after their reports (as the registry receives them).
            for (index, minutes) in [(0, 10.0), (1, 30.0)] {
                let at = start.addingTimeInterval(minutes * 60)
                let sighting = SightingReport(
                    sightingId: UUID().uuidString.lowercased(), bikeId: bikes[index].id, kind: .enter, date: at,
                    firstSeen: at, lastSeen: at, proximity: "near", rssi: -60, count: 3)
                _ = try await registry.database.record(sighting, from: station, now: at)
            }
            clock.set(start.addingTimeInterval(3_600))
            let recovered = try await registry.request(
                .PATCH, "/owner/bikes/\(bikes[0].id)", bearer: bikes[0].token,
                body: #"{"missing":false,"outcome":"recovered"}"#)
            #expect(recovered.status == 200 && recovered.object["report"] is NSNull)
            _ = try await registry.request(
                .PATCH, "/owner/bikes/\(bikes[1].id)", bearer: bikes[1].token, body: #"{"missing":false}"#)
            _ = try await registry.request(
                .PATCH, "/owner/bikes/\(bikes[2].id)", bearer: bikes[2].token,
                body: #"{"missing":false,"outcome":"withdrawn"}"#)
            let lapsed = try await registry.database.sweepReports(
                rules: MissingReportRules(), now: start.addingTimeInterval(31 * Self.day))
            #expect(lapsed.lapsed == 1)
            let bad = try await registry.request(
                .PATCH, "/owner/bikes/\(bikes[3].id)", bearer: bikes[3].token,
                body: #"{"missing":false,"outcome":"lapsed"}"#)
            #expect(bad.status == 400, "an owner cannot say lapsed")

            let stats = try await registry.database.reportStats(now: start.addingTimeInterval(32 * Self.day))
            #expect(
                stats
                    == ReportStats(
                        made: 4, open: 0, lapsed: 1, recovered: 2, withdrawn: 1, medianToFirstSighting: 20 * 60,
                        recoveredSighted: 2), "\(stats)")
            // Through the operator's command too.
            let json = try await BikeRegistryRun.run(["stats", "--json", "--database", registry.testDatabase.location])
            let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any] ?? [:]
            #expect(
                object["reportsMade"] as? Int == 4 && object["medianSecondsToFirstSighting"] as? Int == 1_200,
                "\(json.stdout)")
            #expect(!json.stdout.contains("bike_"), "no bike is named")
        }
    }

    /// The page's forms: a report with a police reference, shown with its lapse; "still missing" renews it; "found"
    /// closes it with the outcome chosen; a fourth report in 30 days says when the next may be made.
    @Test func thePageReportsRenewsAndClosesWithAnOutcome() async throws {
        let directory = try TemporaryDirectory("bike-registry-report-page")
        defer { directory.remove() }
        let clock = TestTime()
        let registry = try await RegistryHarness(.sqlite, directory: directory.path, transport: .inProcess) {
            $0.now = clock.read
        }
        try await withTeardown({ await registry.stop() }) {
            let bike = try await Page.register(registry, minor: 21, form: try await Page.get(registry, "/"))
            let page = try await Page.get(registry, bike.path)
            let csrf = try #require(Page.csrf(in: page.body))
            #expect(page.body.contains(#"name="police_reference""#) && page.body.contains(#"name="last_seen_place""#))
            let start = clock.read()
            let reported = try await Page.post(
                registry, bike.path + "/missing",
                ["csrf": csrf, "missing": "true", "police_reference": "CAD 99/1", "police_force": "Thames Valley"])
            #expect(reported.status == 303)
            let shown = try await Page.get(registry, bike.path)
            #expect(shown.body.contains("CAD 99/1") && shown.body.contains("Thames Valley"))
            #expect(shown.body.contains(ISOTime.format(start.addingTimeInterval(30 * Self.day))), "its lapse")
            #expect(shown.body.contains(#"id="renew-button""#))

            clock.set(start.addingTimeInterval(10 * Self.day))
            #expect(try await Page.post(registry, bike.path + "/renew", ["csrf": csrf]).status == 303)
            let lapsesAt = try #require(try await registry.database.openReport(bikeId: bike.id)?.lapsesAt)
            #expect(abs(lapsesAt.timeIntervalSince(start) - 40 * Self.day) < 0.001, "30 days from the renewal")

            let found = try await Page.post(
                registry, bike.path + "/missing", ["csrf": csrf, "missing": "false", "outcome": "withdrawn"])
            #expect(found.status == 303)
            #expect(try await registry.database.reportStats(now: clock.read()).withdrawn == 1)
            for _ in 0..<2 {
                _ = try await Page.post(registry, bike.path + "/missing", ["csrf": csrf, "missing": "true"])
                _ = try await Page.post(registry, bike.path + "/missing", ["csrf": csrf, "missing": "false"])
            }
            let fourth = try await Page.post(registry, bike.path + "/missing", ["csrf": csrf, "missing": "true"])
            #expect(fourth.status == 429 && fourth.body.contains("at most 3 times in 30 days"), "\(fourth.status)")
        }
    }

    @Test func ntfyToldOfAReportReadsAsText() {
        let lapses = Date(timeIntervalSince1970: 1_900_000_000)
        let lapsing = NtfyMessage(ReportNotice(type: .lapsing, timestamp: lapses, bikeId: "bike_1", lapsesAt: lapses))
        #expect(lapsing.body.contains("lapses \(ISOTime.readable(lapses))") && lapsing.body.contains("Still missing"))
        #expect(lapsing.headers.first?.1 == "Missing report lapses soon")
        let notice = ReportNotice(type: .lapsed, timestamp: lapses, bikeId: "bike_1", lapsesAt: lapses)
        #expect(ReportNotice.decode(notice.json()) == notice, "what is stored reads back")
        #expect(
            ReportNotice.decode(#"{"type":"bike.seen","timestamp":"2026-01-01T00:00:00Z","data":{"bikeId":"b"}}"#)
                == nil)
    }

    @Test func theRetryScheduleBacksOffAndGivesUpAfterThreeDays() {
        let schedule = RetrySchedule(base: 5)
        let created = Date(timeIntervalSince1970: 1_900_000_000)
        var now = created
        var waits: [TimeInterval] = []
        for attempts in 0..<12 {
            guard
                case .retry(let at) = schedule.decide(attempts: attempts, createdAt: created, retryAfter: nil, now: now)
            else {
                Issue.record("abandoned early")
                return
            }
            waits.append(at.timeIntervalSince(now))
            now = at
        }
        #expect(waits == [5, 10, 20, 40, 80, 160, 320, 640, 1280, 2560, 3600, 3600])
        #expect(
            schedule.decide(attempts: 0, createdAt: created, retryAfter: 120, now: created)
                == .retry(at: created.addingTimeInterval(120)), "Retry-After, when longer")
        #expect(
            schedule.decide(attempts: 0, createdAt: created, retryAfter: 86_400, now: created)
                == .retry(at: created.addingTimeInterval(3_600)), "capped at an hour")
        #expect(
            schedule.decide(
                attempts: 40, createdAt: created, retryAfter: nil, now: created.addingTimeInterval(3 * Self.day))
                != .abandon)
        #expect(
            schedule.decide(
                attempts: 40, createdAt: created, retryAfter: nil, now: created.addingTimeInterval(3 * Self.day + 0.001)
            )
                == .abandon)
    }

    /// The ids in the stations' list.
    static func listed(_ registry: RegistryHarness, key: String) async throws -> [String] {
        let answer = try await registry.request(.GET, "/bikes?missing=true", bearer: key)
        return (answer.json as? [[String: Any]] ?? (answer.object["bikes"] as? [[String: Any]]) ?? []).compactMap {
            $0["id"] as? String
        }
    }
}
