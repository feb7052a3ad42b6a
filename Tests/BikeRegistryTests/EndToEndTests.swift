import BeaconTestSupport
import BikeRegistryCore
import BikeRegistryStore
import Foundation
import NIOHTTP1
import Testing

/// The whole system on one machine: `bike-registry serve` (SQLite, then PostgreSQL), owners registering the café capture's bikes
/// with a webhook, and the real `beacond run` replaying Fixtures/cafe/cafe.pcap against it. Each visit of the
/// capture's ground truth reaches its owner exactly once as seen and once as left, signed; nothing else is sent.
@Suite(.timeLimit(.minutes(20))) struct EndToEndTests {
    static let capture = Fixtures.repositoryRoot.appendingPathComponent("Fixtures/cafe/cafe.pcap").path
    static let groundTruth = Fixtures.repositoryRoot.appendingPathComponent("Fixtures/cafe/cafe.sightings.jsonl").path

    @Test(arguments: StoreKind.allCases) func aCafeReplayTellsEachOwnerOncePerVisit(store: StoreKind) async throws {
        let directory = try TemporaryDirectory("bike-registry-e2e")
        defer { directory.remove() }
        let testDatabase = try await TestDatabase.make(store, in: directory.path)
        try await withTeardown({ await testDatabase.drop() }) {
            let database = testDatabase.location
            let process = try await RegistryProcess.start(database: database, in: directory)
            let (server, registry, key) = (process.server, process.client, process.stationKey)
            #expect(process.notify.receive().flatMap { $0 }.contains("READY=1"), "READY=1 once listening")
            let receiver = NotificationReceiver()
            try await receiver.start()
            try await withTeardown({ await receiver.stop() }) {
                // The capture's bikes, registered by their owners; all but 104 reported missing.
                var bikes: [Int: (id: String, token: String, secret: String)] = [:]
                for minor in [101, 102, 103, 104, 105, 106, 107, 108, 901] {
                    let bike = try await registry.register(minor: minor)
                    bikes[minor] = (bike.id, bike.token, try #require(bike.answer.object["webhookSecret"] as? String))
                    let patch =
                        #"{"missing":\#(minor != 104),"notify":{"webhook":"\#(receiver.url("/owner-\(minor)"))"}}"#
                    #expect(
                        try await registry.request(.PATCH, "/owner/bikes/\(bike.id)", bearer: bike.token, body: patch)
                            .status
                            == 200)
                }

                let station = try CafeStation.replay(to: registry.baseURL, key: key, in: directory)
                #expect(
                    await station.waitForExit(seconds: 120) == 0,
                    "beacond:\n\(station.stderr)\nregistry:\n\(server.stderr.suffix(6000))")

                // The ground truth's visits: an enter and an exit each.
                let truth = try String(contentsOfFile: Self.groundTruth, encoding: .utf8).split(separator: "\n").map {
                    line -> [String: Any] in
                    try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                }
                let visits = truth.filter { $0["kind"] as? String == "enter" }
                let expected = visits.count * 2
                #expect(truth.filter { $0["kind"] as? String == "exit" }.count == visits.count)
                // Nothing owed: every message the station's sightings made is received, and none is still to come.
                _ = await receiver.waitFor(expected, seconds: 30)
                let counts = try await testDatabase.settled()
                #expect(counts.owed == 0 && counts.abandoned == 0, "\(counts)")
                let received = receiver.received
                #expect(
                    receiver.received.count == expected,
                    "\(receiver.received.count) notifications for \(visits.count) visits")

                var told: [String: [Date]] = [:]
                for message in received {
                    let minor = try #require(Int(message.path.replacingOccurrences(of: "/owner-", with: "")))
                    let bike = try #require(bikes[minor])
                    #expect(NotificationTests.verify(message, secret: bike.secret), "signature on \(message.path)")
                    let body = try #require(
                        try JSONSerialization.jsonObject(with: Data(message.body.utf8)) as? [String: Any])
                    let data = try #require(body["data"] as? [String: Any])
                    #expect(data["bikeId"] as? String == bike.id)
                    let place = try #require(data["station"] as? [String: Any])
                    #expect(
                        place["name"] as? String == "Ace Café" && place["latitude"] as? Double == 51.5412
                            && place["longitude"] as? Double == -0.2769)
                    let seenAt = try #require(ISOTime.parse(data["seenAt"] as? String ?? ""))
                    told["\(minor) \(body["type"] as? String ?? "")", default: []].append(seenAt)
                }
                for visit in visits {
                    let minor = try #require(visit["minor"] as? Int)
                    // Told to the millisecond: the ground truth has microseconds.
                    let firstSeen = try #require(ISOTime.parse(visit["firstSeen"] as? String ?? ""))
                    #expect(
                        told["\(minor) bike.seen"]?.contains { abs($0.timeIntervalSince(firstSeen)) <= 0.0005 } == true,
                        "bike \(minor)'s visit at \(firstSeen) was told: \(told)")
                }
                for minor in Set(visits.compactMap { $0["minor"] as? Int }) {
                    let count = visits.filter { $0["minor"] as? Int == minor }.count
                    #expect(
                        told["\(minor) bike.seen"]?.count == count && told["\(minor) bike.left"]?.count == count,
                        "bike \(minor): \(told)")
                }
                #expect(told.keys.allSatisfy { !$0.hasPrefix("104 ") && !$0.hasPrefix("901 ") })

                // The owner reads where the bike was heard; the operator sees the station listening.
                var sightings = try await registry.request(
                    .GET, "/owner/bikes/\(bikes[101]!.id)/sightings", bearer: bikes[101]!.token)
                // The server writes stations' refreshes every 5 s.
                for _ in 0..<60 where sightings.object["stationsListeningLastHour"] as? Int != 1 {
                    try await Task.sleep(for: .milliseconds(200))
                    sightings = try await registry.request(
                        .GET, "/owner/bikes/\(bikes[101]!.id)/sightings", bearer: bikes[101]!.token)
                }
                let list = try #require(sightings.object["sightings"] as? [[String: Any]])
                #expect(list.count == truth.filter { $0["minor"] as? Int == 101 }.count)
                #expect(sightings.object["stationsListeningLastHour"] as? Int == 1)
                let listed = try await BeacondRun.run(
                    executable: BeacondRun.registryBinary.path, ["station", "list", "--json", "--database", database])
                let row = try #require(
                    try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any])
                #expect(
                    (row["userAgent"] as? String)?.hasPrefix("beacond/") == true && row["lastRefresh"] is String
                        && row["lastSighting"] is String)

                // Revoked: the next request is refused.
                let revoked = try await BeacondRun.run(
                    executable: BeacondRun.registryBinary.path,
                    ["station", "revoke", "Ace Café", "--database", database])
                #expect(revoked.status == 0)
                try await registry.waitUntilRefused(key)

                server.terminate()
                #expect(
                    await server.waitForExit(seconds: 10) == 0, "SIGTERM ends the registry cleanly:\n\(server.stderr)")
                let secrets = [key] + bikes.values.flatMap { [$0.token, $0.secret, String($0.secret.dropFirst(6))] }
                for log in [server.stderr, station.stderr] {
                    for secret in secrets { #expect(!log.contains(secret), "a key, token or secret was logged") }
                }
                #expect(
                    server.stderr.contains("/bikes") && !server.stderr.contains("key="),
                    "request lines carry the path, never the query")
            }
        }
    }

    @Test func aDatabaseItCannotOpenIsRefusedWithItsStatusAndReason() async throws {
        let cannot = try await BikeRegistryRun.run(["serve", "--database", "/nonexistent/registry.sqlite"])
        #expect(
            cannot.status == 73
                && cannot.stderr.contains("cannot open the registry database /nonexistent/registry.sqlite"),
            "\(cannot.stderr)")
        // PostgreSQL: nothing listening, a password refused, a URL it cannot read. The password is never shown.
        let nobody = try await BikeRegistryRun.run([
            "station", "list", "--database", "postgres://registry:hunter2secret@127.0.0.1:1/registry",
        ])
        #expect(
            nobody.status == 73
                && nobody.stderr.contains("cannot open the registry database postgres://registry@127.0.0.1:1/registry"),
            "\(nobody.stderr)")
        var refused = URLComponents(string: TestPostgres.server)!
        refused.password = "hunter2secret"
        let wrong = try await BikeRegistryRun.run(["station", "list", "--database", refused.string!])
        #expect(wrong.status == 73 && wrong.stderr.contains("password authentication failed"), "\(wrong.stderr)")
        let unreadable = try await BikeRegistryRun.run([
            "station", "list", "--database", "postgres://registry:hunter2secret@db/registry?sslmode=always",
        ])
        #expect(
            unreadable.status == 64 && unreadable.stderr.contains("sslmode is disable, prefer, require or verify-full"),
            "\(unreadable.stderr)")
        // From the environment, where a password belongs (the command line is every local user's to read).
        let environment = try await BeacondRun.run(
            executable: "/usr/bin/env",
            [
                "BIKE_REGISTRY_DATABASE=postgres://registry:hunter2secret@127.0.0.1:1/fromenv",
                BeacondRun.registryBinary.path, "station", "list",
            ])
        #expect(
            environment.status == 73 && environment.stderr.contains("postgres://registry@127.0.0.1:1/fromenv"),
            "\(environment.stderr)")
        for run in [nobody, wrong, unreadable, environment] {
            #expect(!run.stderr.contains("hunter2secret") && !run.stdout.contains("hunter2secret"))
        }
        let badListen = try await BikeRegistryRun.run(["serve", "--listen", "8180"])
        #expect(badListen.status == 64 && badListen.stderr.contains("--listen is HOST:PORT"), "\(badListen.stderr)")
    }
}

/// `bike-registry` run as an operator runs it.
enum BikeRegistryRun {
    static func run(_ arguments: [String]) async throws -> BeacondRun {
        try await BeacondRun.run(executable: BeacondRun.registryBinary.path, arguments)
    }
}
