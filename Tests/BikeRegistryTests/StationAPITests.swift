import BeaconTestSupport
import BikeRegistryCore
import BikeRegistryStore
import Foundation
import NIOHTTP1
import Testing

@testable import BikeRegistryServer

/// The station side: keys (query or bearer, unknown, revoked), the missing list (only missing bikes, no owner data,
/// conditional), and sightings (idempotent, kept for unknown bikes, bad input 4xx).
@Suite(.timeLimit(.minutes(20))) struct StationAPITests {
    @Test(arguments: StoreKind.allCases) func keysAreCheckedOnEveryRequestAndRevocationTakesEffectAtOnce(
        store: StoreKind
    ) async throws {
        let directory = try TemporaryDirectory("bike-registry")
        defer { directory.remove() }
        let registry = try await RegistryHarness(store, directory: directory.path)
        try await withTeardown({ await registry.stop() }) {
            let key = try await registry.database.addStation(name: "Ace Café", latitude: 51.5412, longitude: -0.2769)
            #expect(try await registry.request(.GET, "/bikes?missing=true").status == 401)
            #expect(try await registry.request(.GET, "/bikes?missing=true", bearer: "bks_unknown").status == 401)
            #expect(try await registry.request(.GET, "/bikes?missing=true", bearer: key).status == 200)
            #expect(try await registry.request(.GET, "/bikes?missing=true&key=\(key)").status == 200)
            // Added through a second connection to the database (as `bike-registry station add` beside `serve` is): taken at once.
            let other = try await registry.testDatabase.open()
            let second = try await other.addStation(name: "Second", latitude: 1, longitude: 2)
            #expect(try await registry.request(.GET, "/bikes", bearer: second).status == 200)
            #expect(try await other.revokeStation(name: "Second"))
            await other.close()
            // The server keeps stations in memory and looks for changes every 250 ms (RegistrySnapshot).
            let revoked = ContinuousClock.now
            var status = 0
            while status != 401 && ContinuousClock.now - revoked < .seconds(20) {
                status = try await registry.request(.GET, "/bikes", bearer: second).status
                if status != 401 { try await Task.sleep(for: .milliseconds(20)) }
            }
            // 250 ms and a request. The bound is loose: the local ThreadSanitizer run of 501019b, on two loaded cores,
            // took more than 3 s. What it is for is a server that keeps a revoked key until it restarts.
            #expect(
                status == 401 && ContinuousClock.now - revoked < .seconds(10),
                "refused within seconds of its revocation")
            let sighting = RegistryHarness.sighting(bikeId: "bike-x")
            #expect(try await registry.post(sighting, key: second).status == 401)
            #expect(try await registry.post(sighting, key: key).status == 201)
            // Refreshes are written every refreshWriteInterval (50 ms here).
            var station = try #require(try await registry.database.stations().first { $0.name == "Ace Café" })
            for _ in 0..<40 where station.lastRefreshAt == nil {
                try await Task.sleep(for: .milliseconds(50))
                station = try #require(try await registry.database.stations().first { $0.name == "Ace Café" })
            }
            #expect(station.lastRefreshAt != nil && station.lastSightingAt != nil)
        }
    }

    @Test(arguments: StoreKind.allCases) func theMissingListHasOnlyMissingBikesNoOwnerDataAndAnswersConditionally(
        store: StoreKind
    ) async throws {
        let directory = try TemporaryDirectory("bike-registry")
        defer { directory.remove() }
        let registry = try await RegistryHarness(store, directory: directory.path)
        try await withTeardown({ await registry.stop() }) {
            let key = try await registry.database.addStation(name: "Ace", latitude: 51.5, longitude: -0.2)
            let missing = try await registry.register(minor: 101)
            let parked = try await registry.register(minor: 104)
            for bike in [missing, parked] {
                let webhook =
                    #"{"notify":{"webhook":"https://hooks.example/\#(bike.id)","ntfy":"https://ntfy.example/secret-topic"}}"#
                #expect(
                    try await registry.request(.PATCH, "/owner/bikes/\(bike.id)", bearer: bike.token, body: webhook)
                        .status
                        == 200)
            }
            #expect(
                try await registry.request(
                    .PATCH, "/owner/bikes/\(missing.id)", bearer: missing.token, body: #"{"missing":true}"#
                ).status == 200)

            let list = try await registry.request(.GET, "/bikes?missing=true", bearer: key)
            #expect(list.status == 200)
            let bikes = try #require(list.json as? [[String: Any]])
            #expect(bikes.map { $0["id"] as? String } == [missing.id])
            #expect(bikes.first?["beaconMinor"] as? Int == 101 && bikes.first?["beaconMajor"] as? Int == 1)
            #expect(bikes.first?["beaconUUID"] as? String == "21EECF71-D5C7-4A00-9B90-27C94B5146EA")
            #expect(bikes.first?["make"] as? String == "Triumph")
            let forbidden = ["token", "secret", "webhook", "owner", "ntfy", "mail", "phone", "notify", "hooks.example"]
            for word in forbidden {
                #expect(!list.body.lowercased().contains(word), "the list carries \(word): \(list.body)")
            }

            let etag = try #require(list.headers.first(name: "ETag"))
            let again = try await registry.request(
                .GET, "/bikes?missing=true", bearer: key, headers: [("If-None-Match", etag)])
            #expect(again.status == 304 && again.body.isEmpty)
            // Found again: the list changes, and so does its ETag.
            #expect(
                try await registry.request(
                    .PATCH, "/owner/bikes/\(missing.id)", bearer: missing.token, body: #"{"missing":false}"#
                ).status == 200)
            let changed = try await registry.request(
                .GET, "/bikes?missing=true", bearer: key, headers: [("If-None-Match", etag)])
            #expect(changed.status == 200 && changed.body == "[]" && changed.headers.first(name: "ETag") != etag)
        }
    }

    @Test(arguments: StoreKind.allCases) func aRepeatedSightingChangesNothingAndUnknownOrParkedBikesAreKeptQuietly(
        store: StoreKind
    ) async throws {
        let directory = try TemporaryDirectory("bike-registry")
        defer { directory.remove() }
        let receiver = NotificationReceiver()
        try await receiver.start()
        let registry = try await RegistryHarness(store, directory: directory.path)
        try await withTeardown({
            await registry.stop()
            await receiver.stop()
        }) {
            let key = try await registry.database.addStation(name: "Ace", latitude: 51.5, longitude: -0.2)
            let parked = try await registry.register(minor: 104)
            #expect(
                try await registry.request(
                    .PATCH, "/owner/bikes/\(parked.id)", bearer: parked.token,
                    body: #"{"notify":{"webhook":"\#(receiver.url("/hook"))"}}"#
                ).status == 200)

            let unknown = RegistryHarness.sighting(bikeId: "bike-nobody-knows")
            #expect(try await registry.post(unknown, key: key).status == 201)
            #expect(try await registry.post(unknown, key: key).status == 200, "a repeat is a 2xx")
            let notMissing = RegistryHarness.sighting(bikeId: parked.id, minor: 104)
            #expect(try await registry.post(notMissing, key: key).status == 201)
            let sightings = try await registry.request(
                .GET, "/owner/bikes/\(parked.id)/sightings", bearer: parked.token)
            #expect((sightings.object["sightings"] as? [[String: Any]])?.count == 1, "kept: \(sightings.body)")
            // What a sighting owes is decided and written with it: a bike that is not missing owes nobody anything.
            let counts = try await registry.database.notificationCounts()
            #expect(counts.owed == 0 && counts.delivered == 0 && counts.abandoned == 0, "\(counts)")
            #expect(receiver.received.isEmpty, "a bike that is not missing notifies nobody")
        }
    }

    @Test(arguments: StoreKind.allCases) func badInputIsAFourHundredWithAReasonAndNeverAFiveHundred(store: StoreKind)
        async throws
    {
        let directory = try TemporaryDirectory("bike-registry")
        defer { directory.remove() }
        let registry = try await RegistryHarness(store, directory: directory.path)
        try await withTeardown({ await registry.stop() }) {
            let key = try await registry.database.addStation(name: "Ace", latitude: 51.5, longitude: -0.2)
            let good = RegistryHarness.sighting(bikeId: "bike-1")
            let cases: [(String, String?, Int, String)] = [
                ("{", good.id, 400, "not JSON"),
                ("[]", good.id, 400, "wrong type"),
                (
                    good.body.replacingOccurrences(of: #""kind":"enter""#, with: #""kind":"arrive""#), good.id, 400,
                    "kind"
                ),
                (
                    good.body.replacingOccurrences(of: #""proximity":"near""#, with: #""proximity":"close""#), good.id,
                    400,
                    "proximity"
                ),
                (
                    good.body.replacingOccurrences(of: #""count":3"#, with: #""count":3,"extra":1"#), good.id, 400,
                    "extra"
                ),
                (good.body.replacingOccurrences(of: #""minor":101"#, with: #""minor":70000"#), good.id, 400, "minor"),
                (
                    good.body.replacingOccurrences(
                        of: #""date":"2024-06-01T08:00:30.325272Z""#, with: #""date":"yesterday""#), good.id, 400,
                    "date"
                ),
                (good.body, "another-key", 400, "Idempotency-Key"),
                (good.body, nil, 400, "Idempotency-Key is required"),
                (
                    good.body.replacingOccurrences(
                        of: #""bikeId":"bike-1""#, with: #""bikeId":""# + String(repeating: "x", count: 257) + #"""#),
                    good.id, 400, "bikeId"
                ),
                ("{\"bikeId\":\"" + String(repeating: "x", count: 70_000) + "\"}", good.id, 413, ""),
                // PostgreSQL cannot store U+0000: refused as input on both stores, never a 503 from one of them.
                (
                    good.body.replacingOccurrences(of: #""bikeId":"bike-1""#, with: #""bikeId":"bike\u0000-1""#),
                    good.id,
                    400,
                    "bikeId has a control character"
                ),
            ]
            for (body, idempotency, status, reason) in cases {
                let answer = try await registry.request(
                    .POST, "/sightings", bearer: key, headers: idempotency.map { [("Idempotency-Key", $0)] } ?? [],
                    body: body)
                #expect(answer.status == status, "\(reason): \(answer.status) \(answer.body)")
                #expect(reason.isEmpty || answer.body.contains(reason), "the reason is said: \(answer.body)")
            }
            for body in [
                "{", #"{"uuid":"nope","major":1,"minor":1,"make":"a","model":"b","colour":"c"}"#,
                #"{"uuid":"21EECF71-D5C7-4A00-9B90-27C94B5146EA","major":1,"minor":-1,"make":"a","model":"b","colour":"c"}"#,
                #"{"major":1}"#,
                #"{"uuid":"21EECF71-D5C7-4A00-9B90-27C94B5146EA","major":1,"minor":1,"make":"a\u0000","model":"b","colour":"c"}"#,
                #"{"uuid":"21EECF71-D5C7-4A00-9B90-27C94B5146EA","major":1,"minor":1,"make":"a","model":"b\n","colour":"c"}"#,
            ] {
                let answer = try await registry.request(.POST, "/owner/bikes", body: body)
                #expect(answer.status == 400, "\(body): \(answer.status) \(answer.body)")
            }
            #expect(try await registry.post(good, key: key).status == 201, "the good one still goes in")
        }
    }
}

/// `station import`: many stations at once, each key printed once and taken by a running server; a bad line stops it
/// with its number, the stations before it added.
@Suite(.timeLimit(.minutes(20))) struct StationImportTests {
    @Test(arguments: StoreKind.allCases) func importAddsEveryStationUntilABadLine(store: StoreKind) async throws {
        let directory = try TemporaryDirectory("bike-registry-import")
        defer { directory.remove() }
        let registry = try await RegistryHarness(store, directory: directory.path)
        try await withTeardown({ await registry.stop() }) {
            let file = directory.file("stations.jsonl")
            try """
            {"name": "Ace Café", "latitude": 51.5412, "longitude": -0.2769}

            {"name": "Squires", "latitude": 53.84, "longitude": -1.26}
            {"name": "Ace Café", "latitude": 1, "longitude": 2}
            {"name": "Never", "latitude": 1, "longitude": 2}
            """.write(toFile: file, atomically: true, encoding: .utf8)
            let run = try await BikeRegistryRun.run([
                "station", "import", file, "--database", registry.testDatabase.location,
            ])
            #expect(
                run.status == 64 && run.stderr.contains("line 4: a station named Ace Café exists already"),
                "\(run.stderr)")
            let printed = run.stdout.split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: String]
            }
            #expect(printed.map { $0["name"] } == ["Ace Café", "Squires"])
            for station in printed {
                let key = try #require(station["key"])
                #expect(try await registry.request(.GET, "/bikes", bearer: key).status == 200)
            }
            #expect(try await registry.database.stations().map(\.name) == ["Ace Café", "Squires"])
        }
    }
}

@Suite(.timeLimit(.minutes(20))) struct BearerTests {
    @Test(
        arguments: [
            ("Bearer abc", "abc"), ("bearer abc", "abc"), ("BEARER   abc  ", "abc"), ("Bearer\tabc", nil),
            ("Bearerabc", nil), ("Basic abc", nil),
            ("Bearer ", ""), ("Bear", nil), ("Bearer a b", "a b"), ("Bearer é", "é"),
        ] as [(String, String?)])
    func theTokenIsReadAsRFC9110Says(header: String, token: String?) {
        #expect(StationRoutes.bearer(header) == token)
    }
}

@Suite(.timeLimit(.minutes(20))) struct IfNoneMatchTests {
    @Test(
        arguments: [
            (#""m3""#, true), (#" "m3" "#, true), (#""m1", "m3""#, true), (#""m1","m3""#, true),
            ("\"m1\" ,\t\"m3\"\t", true),
            (#""m33""#, false), (#"m3"#, false), ("", false), (",", false), (#""m1""#, false),
        ] as [(String, Bool)])
    func theListIsReadAsRFC9110Says(header: String, match: Bool) {
        #expect(StationRoutes.matches(header, #""m3""#) == match)
    }
}
