import BeaconTestSupport
import Foundation
import Testing

/// `beacond replay --missing`, run as a user would, against the café capture's ground truth.
@Suite(.timeLimit(.minutes(20))) struct SightingReplayTests {
    static func cafe(_ extra: String...) async throws -> BeacondRun {
        try await BeacondRun(
            [
                "replay", "--format", "jsonl", "--missing", Fixtures.cafeBikes.path,
                "--station-beacon", Fixtures.cafeStationBeacon, Fixtures.cafeCapture.path,
            ] + extra)
    }

    @Test func cafeSightingsMatchTheGeneratorsGroundTruth() async throws {
        let run = try await Self.cafe()
        #expect(run.status == 0, "\(run.stderr)")
        let actual = try run.jsonLines
        let expected = try String(contentsOf: Fixtures.cafeSightings, encoding: .utf8).split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(actual.count == expected.count)
        // Exact fields: which bike, which event, when, how many adverts, the strongest reading.
        let exactKeys = [
            "kind", "bikeId", "uuid", "major", "minor", "firstSeen", "lastSeen", "count", "rssiMax", "proximity",
        ]
        func exact(_ object: [String: Any]) -> String {
            exactKeys.map { "\($0)=\(object[$0] ?? "nil")" }.joined(separator: " ")
        }
        let order: ([String: Any], [String: Any]) -> Bool = { exact($0) < exact($1) }
        let actualSorted = actual.sorted(by: order)
        let expectedSorted = expected.sorted(by: order)
        #expect(actualSorted.map(exact) == expectedSorted.map(exact))
        // The smoothed RSSI is beacond's own; it must sit near the model's mean once a few adverts are in.
        for (got, want) in zip(actualSorted, expectedSorted) where (want["count"] as? Int ?? 0) >= 20 {
            let rssi = try #require(got["rssi"] as? Double)
            let mean = try #require(want["rssiMean"] as? Double)
            #expect(abs(rssi - mean) < 3, "\(exact(got)): rssi \(rssi), model mean \(mean)")
        }
        // Nonsense measured power: no distance at all.
        for object in actual where object["bikeId"] as? String == "bike-107" {
            #expect(object["distance"] is NSNull)
        }
    }

    @Test func outputHasExactlyTheDocumentedKeysAndNoAddress() async throws {
        let run = try await Self.cafe()
        let keys = [
            "sightingId", "kind", "bikeId", "uuid", "major", "minor", "firstSeen", "lastSeen", "count", "rssi",
            "rssiMax", "proximity", "distance",
        ]
        for object in try run.jsonLines { #expect(object.keys.sorted() == keys.sorted()) }
        // The capture's beacon MAC addresses (C0:00:65:00:00:01 and so on) never appear; nor does owner data.
        #expect(!run.stdout.contains("C0:00"))
        #expect(!run.stdout.contains("SECRET") && !run.stderr.contains("SECRET"))
        #expect(!run.stdout.contains("Triumph"), "descriptive fields are kept for the registry, not printed")
    }

    @Test func theSameCaptureGivesTheSameSightingsEveryTime() async throws {
        let first = try await Self.cafe()
        let second = try await Self.cafe()
        #expect(first.stdout == second.stdout)
        let ids = try first.jsonLines.compactMap { $0["sightingId"] as? String }
        #expect(Set(ids).count == ids.count)
        // Another station makes other ids for the same events.
        let other = try await Self.cafe("--station-id", "another-cafe")
        #expect(Set(try other.jsonLines.compactMap { $0["sightingId"] as? String }).isDisjoint(with: ids))
    }

    @Test func summaryCountsTheBikeListAndTheEngine() async throws {
        let run = try await Self.cafe()
        #expect(run.stderr.contains("bike list: 7 missing, 2 not missing, 3 skipped"), "\(run.stderr)")
        #expect(run.stderr.contains("1 outside the regions"))
        #expect(run.stderr.contains("station beacon: 1200 adverts"))
        #expect(run.stderr.contains("sightings: 8 enter, 4 update, 8 exit"))
    }

    @Test func tableFitsEightyColumns() async throws {
        let run = try await BeacondRun(
            ["replay", "--missing", Fixtures.cafeBikes.path, Fixtures.cafeCapture.path])
        #expect(run.status == 0)
        let lines = run.stdout.split(separator: "\n")
        #expect(lines.count == 22, "header, date line, 20 sightings")
        #expect(lines.allSatisfy { $0.count <= 80 })
    }

    @Test(arguments: [
        ("[", "the bike list is not valid JSON"), ("{\"bikes\":[]}", "the bike list is not a JSON array"),
    ])
    func badBikeListsExitTwoWithOneLine(content: String, message: String) async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("beacond-bikes-\(UUID()).json").path
        try Data(content.utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let run = try await BeacondRun(["replay", "--missing", path, Fixtures.cafeCapture.path])
        #expect(run.status == 2)
        #expect(run.stderr == "beacond: \(path): \(message)\n")
        #expect(run.stdout.isEmpty)
    }

    /// The engine's keys are the daemon's: the bounds `beacond run` and the file hold them to, and the same words.
    @Test(arguments: [
        (["--report-interval", "5"], #"--report-interval: expected a whole number from 10 to 86400, got "5""#),
        (["--exit-timeout", "0"], #"--exit-timeout: expected a whole number from 1 to 3600, got "0""#),
        (["--station-id", "a b"], #"--station-id: expected 1 to 64 letters, digits, '-', '_' or '.', got "a b""#),
    ])
    func theEngineKeysAreTheDaemons(flags: [String], said: String) async throws {
        let run = try await BeacondRun(
            ["replay", "--missing", Fixtures.cafeBikes.path] + flags + [Fixtures.cafeCapture.path])
        #expect(run.status == 64)
        #expect(run.stderr.contains(said), "\(run.stderr)")
    }

    @Test func aMissingBikeListFileExitsTwo() async throws {
        let run = try await BeacondRun(["replay", "--missing", "/nonexistent/bikes.json", Fixtures.cafeCapture.path])
        #expect(run.status == 2)
        #expect(run.stderr == "beacond: /nonexistent/bikes.json: no such file or directory\n")
    }
}

@Suite(.timeLimit(.minutes(20))) struct CheckConfigCommandTests {
    @Test func listsEveryErrorAndExitsSeventyEight() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("beacond.conf")
        try Data("latitude = north\nbogus = 1\n".utf8).write(to: URL(fileURLWithPath: path))
        let run = try await BeacondRun(["check-config", "--config", path, "--exit-timeout", "0"])
        #expect(run.status == 78)
        #expect(
            run.stderr == """
                beacond: --exit-timeout: expected a whole number from 1 to 3600, got "0"
                beacond: \(path): line 1: latitude: expected a number from -90.0 to 90.0, got "north"
                beacond: \(path): line 2: bogus: unknown key

                """)
    }

    @Test func aGoodConfigurationSaysSo() async throws {
        let run = try await BeacondRun([
            "check-config", "--config", "/dev/null", "--station-id", "cafe-1", "--state-dir", "/tmp/beacond-state",
        ])
        #expect(run.status == 0)
        #expect(
            run.stdout.contains("configuration is good") && run.stdout.contains("file:///tmp/beacond-state/bikes.json"))
    }

    @Test func aRegionNamingAMajorIsNotedAsMatchingNoRotatingBeacon() async throws {
        let uuid = "21EECF71-D5C7-4A00-9B90-27C94B5146EA"
        let named = try await BeacondRun(["check-config", "--config", "/dev/null", "--region", "\(uuid):1"])
        #expect(named.status == 0)
        #expect(
            named.stdout.contains(
                "note         region \(uuid):1 names major 1, so it can never match a rotating beacon (region = \(uuid) matches both)"
            ), "\(named.stdout)")
        let unnamed = try await BeacondRun(["check-config", "--config", "/dev/null", "--region", uuid])
        #expect(unnamed.status == 0 && unnamed.stdout.contains("configuration is good"))
        #expect(!unnamed.stdout.contains("note"))
    }

    @Test func aNamedFileThatIsMissingIsAnError() async throws {
        let run = try await BeacondRun(["check-config", "--config", "/nonexistent/beacond.conf"])
        #expect(run.status == 78)
        #expect(run.stderr == "beacond: /nonexistent/beacond.conf: no such file or directory\n")
    }
}
