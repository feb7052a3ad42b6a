import BeaconTestSupport
import Foundation
import Testing

/// The owner's pages in a real browser: Tests/browser/owner_journey.py drives Debian's chromium through Selenium
/// against the real `bike-registry serve`, with the real `beacond` replaying the café capture as the station. It
/// registers a bike by the claim code of a beacon the operator issued, saves this test's webhook and sends a test,
/// reports the bike missing with a police reference, lets the station report it, sees the sighting; a finder
/// reports the beacon on /found and a sighting then tells the owner nothing, until the operator restores the bike;
/// reports it found, is refused a second registration and a form without its CSRF token,
/// makes a new link and deletes the bike, checking every page as served (headers, no inline script, tidy, size,
/// labels, 360 px) and saving each as PNGs at 360 and 1280 px in `artifacts/owner-pages/` (or
/// `$BEACOND_ARTIFACTS/owner-pages/`). Here: what the webhook received, and that the server's log holds no token.
///
/// `.ci/run`'s sanitizer step sets BEACOND_BROWSER_TEST=off: there the journey's sanitized `beacond` and `bike-registry`
/// with a browser beside them took both cores for 110 s, and fifteen other suites' PostgreSQL requests ran out of
/// their 5 s. The pages' server code runs under the sanitizers through `OwnerPageTests`; the journey runs in every
/// CI run's plain `swift test`.
@Suite(.disabled(if: ProcessInfo.processInfo.environment["BEACOND_BROWSER_TEST"] == "off"), .timeLimit(.minutes(20)))
struct OwnerBrowserTests {
    static let script = Fixtures.repositoryRoot.appendingPathComponent("Tests/browser/owner_journey.py").path
    /// Made by scripts/setup, with Selenium from PyPI.
    static let python = Fixtures.repositoryRoot.appendingPathComponent(".build/browser-venv/bin/python").path

    static var screenshots: String {
        let root =
            ProcessInfo.processInfo.environment["BEACOND_ARTIFACTS"]
            ?? Fixtures.repositoryRoot.appendingPathComponent("artifacts").path
        return root + "/owner-pages"
    }

    @Test func anOwnersWholeJourneyInARealBrowser() async throws {
        let directory = try TemporaryDirectory("bike-registry-browser")
        defer { directory.remove() }
        let database = directory.file("registry.sqlite")
        let relay = try MailRelay()
        let password = directory.file("smtp-password")
        try "\(MailRelay.password)\n".write(toFile: password, atomically: true, encoding: .utf8)
        let registry = try await RegistryProcess.start(
            database: database, in: directory, registration: "claim-code",
            arguments: [
                "--public-url", "http://registry.test", "--smtp", relay.url, "--smtp-user", MailRelay.user,
                "--smtp-password-file", password, "--smtp-ca-file", relay.caFile, "--mail-from",
                "FindMyBike <noreply@registry.test>",
            ])
        defer { registry.server.terminate() }
        let receiver = NotificationReceiver()
        try await receiver.start()
        try await withTeardown({ await receiver.stop() }) {
            // The station, for the script to run once the bike is missing: the café capture, to its end.
            let keyFile = directory.file("api-key")
            try "\(registry.stationKey)\n".write(toFile: keyFile, atomically: true, encoding: .utf8)
            try "".write(toFile: directory.file("empty.conf"), atomically: true, encoding: .utf8)
            let station = directory.file("station.sh")
            let arguments = [
                BeacondRun.binary.path, "run", "--replay", EndToEndTests.capture, "--speed", "0", "--exit-when-drained",
                "--registry", registry.client.baseURL, "--api-key-file", keyFile, "--state-dir",
                directory.file("state"),
                "--control-socket", directory.file("control.sock"), "--station-id", "ace-cafe", "--latitude", "0",
                "--longitude", "0", "--config", directory.file("empty.conf"),
            ]
            try ("#!/bin/sh\nexec " + arguments.map { "'\($0)'" }.joined(separator: " ") + "\n").write(
                toFile: station, atomically: true, encoding: .utf8)
            chmod(station, 0o755)

            // The operator issues the beacon the café capture's bike 101 carries, and prints its label.
            let issued = try await BeacondRun.run(
                executable: BeacondRun.registryBinary.path,
                [
                    "beacons", "issue", "--region", "21EECF71-D5C7-4A00-9B90-27C94B5146EA:1", "--count", "1",
                    "--first-minor", "101", "--database", database,
                ])
            let code = try #require(
                issued.stdout.split(separator: "\n").last?.split(separator: ",").last.map(String.init),
                "\(issued.stdout) \(issued.stderr)")

            #expect(FileManager.default.isExecutableFile(atPath: Self.python), "no \(Self.python): run scripts/setup")
            let journey = try await BeacondRun.run(
                executable: Self.python,
                [
                    Self.script, "--base", registry.client.baseURL, "--webhook", receiver.url("/owner"), "--station",
                    station, "--station-key", registry.stationKey, "--screenshots", Self.screenshots, "--claim-code",
                    code,
                    "--receiver", receiver.url(""), "--registry-binary", BeacondRun.registryBinary.path, "--database",
                    database, "--mail-spool", relay.directory.file("spool"), "--email", "rider@example.com",
                ])
            let summary = journey.stdout.split(separator: "\n").last.flatMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
            #expect(journey.status == 0, "\(journey.stdout)\n\(journey.stderr)")
            let bikeId = try #require(summary?["bikeId"] as? String, "\(journey.stdout)\n\(journey.stderr)")
            let pages = try #require(summary?["pages"] as? [[String: Any]])
            #expect(pages.count >= 9, "\(pages)")
            #expect((summary?["screenshots"] as? [String])?.count == pages.count * 2)

            // The webhook got the test and the station's sighting of this bike, signed.
            let received = await receiver.waitFor(2, seconds: 30)
            let types = received.compactMap { message -> String? in
                guard let body = try? JSONSerialization.jsonObject(with: Data(message.body.utf8)) as? [String: Any],
                    (body["data"] as? [String: Any])?["bikeId"] as? String == bikeId
                else { return nil }
                return body["type"] as? String
            }
            #expect(types.first == "bike.test", "\(types)")
            #expect(types.contains("bike.seen"), "the station's sighting reached the owner: \(types)")
            #expect(types.filter { $0 == "bike.paused" }.count == 1, "told once of the pause: \(types)")
            // The sighting while paused told nobody; the one after the operator restored the bike did. Only what came
            // after the pause counts: the journey waits for `bike.paused` before posting the paused sighting, and an
            // earlier message's time can share its second (CI's plain step of e1b7730: the test message did).
            let bodies = received.compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.body.utf8)) as? [String: Any]
            }
            let afterPause = bodies.drop { $0["type"] as? String != "bike.paused" }.dropFirst()
            let seenAt = afterPause.compactMap { body -> String? in
                guard body["type"] as? String == "bike.seen" else { return nil }
                return (body["data"] as? [String: Any])?["seenAt"] as? String
            }
            let paused = try #require(summary?["pausedSighting"] as? String)
            let restored = try #require(summary?["restoredSighting"] as? String)
            #expect(seenAt.count == 1 && seenAt.allSatisfy { $0.hasPrefix(restored) }, "paused at \(paused): \(seenAt)")
            // Neither the claim code, the police reference nor the finder's message is in the server's log.
            for secret in [code, "CAD 4321/27NOV", "jacket", "21EECF71-D5C7-4A00-9B90-27C94B5146EA/1/101"] {
                #expect(!registry.server.stderr.contains(secret), "\(secret) in the server's log")
            }
            #expect(received.allSatisfy { $0.headers["webhook-signature"]?.hasPrefix("v1,") == true })
            // By mail: the confirmation, the test, and the station's sighting once the address was confirmed.
            let mail = try relay.messages()
            #expect(mail.allSatisfy { $0.to == "rider@example.com" && $0.defects.isEmpty })
            #expect(mail.first?.header("Subject") == "Confirm your address for bike-registry")
            #expect(mail.contains { $0.header("Subject") == "A test message about your green Triumph Bonneville" })
            #expect(mail.contains { $0.header("Subject") == "Your green Triumph Bonneville was seen at Ace Café" })
            #expect(!registry.server.stderr.contains("rider@example.com"), "no address in the server's log")

            // The private links were never written to the log: their paths are logged without the token.
            let tokens = try #require(summary?["tokens"] as? [String])
            #expect(tokens.count == 2)
            let log = registry.server.stderr
            #expect(log.contains("/my/\(bikeId)/-"), "the pages' requests are logged")
            for token in tokens { #expect(!log.contains(token), "an owner token in the server's log") }
        }
    }
}
