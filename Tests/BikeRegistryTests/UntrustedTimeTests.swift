import BeaconTestSupport
import BikeRegistryCore
import Foundation
import NIOHTTP1
import Testing

@testable import BikeRegistryServer
@testable import BikeRegistryStore

/// Times a station sends are input like any other (issue 37, item 1): a year-0000 date once took the server down on
/// every read of that bike's sightings, and in the POST itself when it was a missing bike's first-seen time, so the
/// station's retry took it down again. Formatting and parsing are total; a time the registry cannot believe is
/// stored as received and marked.
@Suite(.timeLimit(.minutes(20))) struct UntrustedTimeTests {
    /// Every time formats, to RFC 3339's range: the edges, and the values a double can hold that no calendar can.
    /// Seconds since 1970, not Dates, as the arguments: Foundation's own description of a Date (which the test
    /// library prints) traps on NaN.
    @Test(
        arguments: [
            (
                ISOTime.parse("0000-01-01T00:00:00+00:01")!.timeIntervalSince1970, "0000-01-01T00:00:00.000Z",
                "0000-01-01 00:00:00 UTC"
            ),
            (
                ISOTime.parse("0001-01-01T00:00:00Z")!.timeIntervalSince1970, "0001-01-01T00:00:00.000Z",
                "0001-01-01 00:00:00 UTC"
            ),
            (
                ISOTime.parse("9999-12-31T23:59:59.999Z")!.timeIntervalSince1970, "9999-12-31T23:59:59.999Z",
                "9999-12-31 23:59:59 UTC"
            ),
            (
                ISOTime.parse("9999-12-31T23:59:59-23:59")!.timeIntervalSince1970, "9999-12-31T23:59:59.999Z",
                "9999-12-31 23:59:59 UTC"
            ),
            (-1e12, "0000-01-01T00:00:00.000Z", "0000-01-01 00:00:00 UTC"),
            (-1, "1969-12-31T23:59:59.000Z", "1969-12-31 23:59:59 UTC"),
            (1e300, "9999-12-31T23:59:59.999Z", "9999-12-31 23:59:59 UTC"),
            (-.greatestFiniteMagnitude, "0000-01-01T00:00:00.000Z", "0000-01-01 00:00:00 UTC"),
            (.infinity, "9999-12-31T23:59:59.999Z", "9999-12-31 23:59:59 UTC"),
            (-.infinity, "0000-01-01T00:00:00.000Z", "0000-01-01 00:00:00 UTC"),
            (.nan, "0000-01-01T00:00:00.000Z", "0000-01-01 00:00:00 UTC"),
            (1_717_228_830.325, "2024-06-01T08:00:30.325Z", "2024-06-01 08:00:30 UTC"),
        ] as [(Double, String, String)])
    func everyTimeFormats(seconds: Double, iso: String, readable: String) {
        let time = Date(timeIntervalSince1970: seconds)
        #expect(ISOTime.format(time) == iso)
        #expect(ISOTime.readable(time) == readable)
    }

    /// Text that is no RFC 3339 time is nil (a 400 with the field's name), never a trap.
    @Test(arguments: [
        "10000-01-01T00:00:00Z", "-0001-01-01T00:00:00Z", "+2024-06-01T08:00:00Z", "2024-02-30T00:00:00Z",
        "2023-02-29T00:00:00Z", "2024-06-01T24:00:00Z", "2024-06-01T08:60:00Z", "2024-06-01T08:00:00+24:00",
        "2024-06-01T08:00:00", "2024-06-01", "2024-06-01T08:00:00.Z", "", "T", "9999999999-01-01T00:00:00Z",
        "2024-06-01T08:00:00Z ", "２０２４-06-01T08:00:00Z",
    ])
    func textThatIsNoTimeIsRefused(text: String) {
        #expect(ISOTime.parse(text) == nil, "\(text)")
    }

    @Test(arguments: [
        ("2019-12-31T23:59:59.999Z", false), ("2020-01-01T00:00:00Z", true), ("2026-11-27T12:00:00Z", true),
        ("2026-11-28T12:00:00Z", true), ("2026-11-28T12:00:00.001Z", false), ("0000-01-01T00:00:00+00:01", false),
        ("9999-12-31T23:59:59Z", false),
    ])
    func aStationsTimeIsBelievedFrom2020ToADayAheadOfTheRegistrysClock(time: String, believed: Bool) throws {
        let now = try #require(ISOTime.parse("2026-11-27T12:00:00Z"))
        #expect(StationClockCheck.believable(try #require(ISOTime.parse(time)), receivedAt: now) == believed)
    }

    /// What a station can send in each time field, through the API on both stores: stored as received and marked,
    /// shown so in the owner's API, on the bike's page and in the owner's message; malformed text is a 400. Before
    /// this, the first year-0000 time took the server (this test process) down.
    @Test(arguments: StoreKind.allCases) func timesItCannotBelieveAreStoredAsReceivedInEveryField(store: StoreKind)
        async throws
    {
        let directory = try TemporaryDirectory("bike-registry-times")
        defer { directory.remove() }
        let receiver = NotificationReceiver()
        try await receiver.start()
        let registry = try await RegistryHarness(store, directory: directory.path, transport: .inProcess)
        try await withTeardown({
            await registry.stop()
            await receiver.stop()
        }) {
            let key = try await registry.database.addStation(name: "Ace Café", latitude: 51.5412, longitude: -0.2769)
            let bike = try await registry.registerMissing(minor: 101, webhook: receiver.url("/hook"))
            let tomorrowAndMore = ISOTime.format(Date().addingTimeInterval(86_400 + 3_600))
            let unbelievable = [
                "0000-01-01T00:00:00+00:01", "0001-01-01T00:00:00Z", "2019-12-31T23:59:59Z", "9999-12-31T23:59:59.999Z",
                tomorrowAndMore,
            ]
            let before = Date()
            var posted = 0
            for (day, field) in ["date", "firstSeen", "lastSeen"].enumerated() {
                for (hour, value) in unbelievable.enumerated() {
                    // A visit of its own each (its first-seen time names it), so each owes the owner a message.
                    let believable = "2024-06-1\(day)T0\(hour):30:00Z"
                    var times = [
                        "date": believable, "firstSeen": "2024-06-1\(day)T0\(hour):00:00Z", "lastSeen": believable,
                    ]
                    times[field] = value
                    let answer = try await registry.post(Self.sighting(bikeId: bike.id, times), key: key)
                    #expect(answer.status == 201, "\(field) = \(value): \(answer.status) \(answer.body)")
                    posted += 1
                }
                for malformed in ["10000-01-01T00:00:00Z", "2024-02-30T00:00:00Z", "-0001-01-01T00:00:00Z"] {
                    var times = ["date": "2024-06-01T08:00:00Z", "firstSeen": "2024-06-01T08:00:00Z"]
                    times["lastSeen"] = "2024-06-01T08:00:00Z"
                    times[field] = malformed
                    let answer = try await registry.post(Self.sighting(bikeId: bike.id, times), key: key)
                    #expect(
                        answer.status == 400 && answer.body.contains(field), "\(field) = \(malformed): \(answer.body)")
                }
            }
            let after = Date()
            // One the registry believes, kept as sent.
            let good = [
                "date": "2024-07-01T10:00:05Z", "firstSeen": "2024-07-01T10:00:00Z", "lastSeen": "2024-07-01T10:00:05Z",
            ]
            #expect(try await registry.post(Self.sighting(bikeId: bike.id, good), key: key).status == 201)

            let answer = try await registry.request(.GET, "/owner/bikes/\(bike.id)/sightings", bearer: bike.token)
            #expect(answer.status == 200, "\(answer.body)")
            let sightings = try #require(answer.object["sightings"] as? [[String: Any]])
            #expect(sightings.count == posted + 1)
            let asReceived = sightings.filter { $0["timesAsReceived"] as? Bool == true }
            #expect(asReceived.count == posted, "\(answer.body)")
            for sighting in asReceived {
                for field in ["seenAt", "firstSeen", "lastSeen"] {
                    let time = try #require((sighting[field] as? String).flatMap(ISOTime.parse), "\(field)")
                    #expect(
                        time >= before.addingTimeInterval(-0.001) && time <= after.addingTimeInterval(0.001),
                        "\(field) is when it was received: \(sighting)")
                }
            }
            let believed = try #require(sightings.first { $0["timesAsReceived"] as? Bool == false })
            #expect(believed["seenAt"] as? String == "2024-07-01T10:00:05.000Z")
            #expect(believed["firstSeen"] as? String == "2024-07-01T10:00:00.000Z")

            // The bike's page, with every one of them on it.
            let page = try await Page.get(registry, "/my/\(bike.id)/\(bike.token)")
            #expect(page.status == 200)
            #expect(page.body.components(separatedBy: "clock was wrong; shown as received").count - 1 == posted)

            // A message for each visit, each saying its time is the registry's.
            let messages = await receiver.waitFor(posted + 1)
            #expect(messages.count == posted + 1)
            let marked = try messages.filter { message in
                let body = try #require(
                    try JSONSerialization.jsonObject(with: Data(message.body.utf8)) as? [String: Any])
                return (body["data"] as? [String: Any])?["timesAsReceived"] as? Bool == true
            }
            #expect(marked.count == posted)
        }
    }

    /// Sightings stored before this rule, with such times, are given the same treatment when the database is
    /// upgraded: the rows as the previous release stored them (the column is not there yet), then the store
    /// opened by this one.
    @Test(arguments: StoreKind.allCases) func sightingsStoredEarlierWithSuchTimesAreCarriedOverAsReceived(
        store: StoreKind
    ) async throws {
        let directory = try TemporaryDirectory("bike-registry-times")
        defer { directory.remove() }
        let database = try await TestDatabase.make(store, in: directory.path)
        try await withTeardown({ await database.drop() }) {
            let first = try await database.open()
            _ = try await first.addStation(name: "Ace", latitude: 51.5, longitude: -0.2)
            await first.close()
            // Back to the previous release's schema, and its rows: one from year 0000, one from 9999, one believable.
            let received = 1_780_000_000.0
            try await database.execute([
                "ALTER TABLE sighting DROP COLUMN timesAsReceived",
                "DELETE FROM \(database.migrationsTable) WHERE identifier = 'v3-station-clock'",
                """
                INSERT INTO sighting (id, stationId, bikeId, kind, seenAt, firstSeen, lastSeen, proximity, count, visitId, receivedAt)
                VALUES ('a', 1, 'bike_1', 'enter', -62167219260, -62167219260, -62167219260, 'near', 1, 'v1', \(received)),
                       ('b', 1, 'bike_1', 'exit', 253402300799, 1717228800, 253402300799, 'near', 1, 'v2', \(received + 1)),
                       ('c', 1, 'bike_1', 'enter', 1717228800, 1717228800, 1717228800, 'near', 1, 'v3', \(received + 2))
                """,
            ])
            let upgraded = try await database.open()
            try await withTeardown({ await upgraded.close() }) {
                let sightings = try await upgraded.sightings(bikeId: "bike_1")
                #expect(sightings.count == 3)
                for sighting in sightings where sighting.visitId != "v3" {
                    #expect(sighting.timesAsReceived)
                    #expect(
                        sighting.seenAt.timeIntervalSince1970 >= received && sighting.firstSeen == sighting.lastSeen)
                }
                let kept = try #require(sightings.first { $0.visitId == "v3" })
                #expect(!kept.timesAsReceived && kept.seenAt.timeIntervalSince1970 == 1_717_228_800)
            }
        }
    }

    /// A sighting with each time given; the rest as `RegistryClient.sighting` writes them.
    static func sighting(bikeId: String, _ times: [String: String]) -> (id: String, body: String) {
        let id = UUID().uuidString.lowercased()
        let body = """
            {"bikeId":"\(bikeId)","date":"\(times["date"]!)","latitude":51.5,"longitude":-0.12,"sightingId":"\(id)",\
            "kind":"enter","stationId":"test","uuid":"21EECF71-D5C7-4A00-9B90-27C94B5146EA","major":1,"minor":101,\
            "firstSeen":"\(times["firstSeen"]!)","lastSeen":"\(times["lastSeen"]!)","count":3,"rssi":-61.5,"proximity":"near"}
            """
        return (id, body)
    }
}
