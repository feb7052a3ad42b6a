import BeaconControl
import BeaconDaemon
import BeaconTestSupport
import Foundation
import RegistryTestServer
import Testing

/// The real `beacond run` process on the café capture, reporting to a registry on loopback: status while it
/// runs, SIGTERM part-way, a restart that finishes the replay, and then the registry's view of it all.
@Suite(.serialized, .timeLimit(.minutes(20))) struct DaemonEndToEndTests {
    static let capture = Fixtures.repositoryRoot.appendingPathComponent("Fixtures/cafe/cafe.pcap").path
    static let bikes = Fixtures.repositoryRoot.appendingPathComponent("Fixtures/cafe/bikes.json").path
    static let groundTruth = Fixtures.repositoryRoot.appendingPathComponent("Fixtures/cafe/cafe.sightings.jsonl").path
    static let apiKey = "e2e-key-7Hq93xZ"

    @Test func stopAndRestartDeliverEverySightingOnce() async throws {
        let registry = RegistryServer()
        try await registry.start()
        try await withTeardown({ await registry.stop() }) {
            registry.setBikes(try String(contentsOfFile: Self.bikes, encoding: .utf8))
            registry.requireKey(Self.apiKey)

            let directory = try TemporaryDirectory("beacond-e2e")
            defer { directory.remove() }
            let keyFile = directory.file("api-key")
            try "\(Self.apiKey)\n".write(toFile: keyFile, atomically: true, encoding: .utf8)
            let socket = directory.file("control.sock")
            let notify = try NotifyListener(path: directory.file("notify.sock"))
            let common = [
                "run", "--replay", Self.capture, "--registry", registry.baseURL, "--api-key-file", keyFile,
                "--state-dir",
                directory.file("state"), "--control-socket", socket, "--station-id", "e2e-station", "--latitude",
                "51.5",
                "--longitude=-0.12", "--log-level", "debug", "--config", try Self.emptyConfig(in: directory),
            ]

            // First run: at 60x the 41-minute capture takes about 41 s; stop it once a few sightings are through.
            let first = try DaemonProcess(
                common + ["--speed", "60"],
                environment: ["NOTIFY_SOCKET": notify.path, "JOURNAL_STREAM": "8:1234", "WATCHDOG_USEC": "2000000"],
                logDirectory: directory.path, name: "first")
            var status: StatusReport?
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline && first.isRunning {
                if let report = try? Self.status(socket: socket), report.outbox.delivered >= 4 {
                    status = report
                    break
                }
                try await Task.sleep(for: .milliseconds(200))
            }
            let running = try #require(
                status, "no status with 4 delivered sightings within 60 s; stderr:\n\(first.stderr)")
            #expect(running.healthy, "\(running.problems)")
            #expect(running.capture.backend == "replay")
            #expect(running.capture.state == "running")
            #expect(running.capture.iBeacons > 0)
            #expect(running.missingSet.size == 7)
            #expect(running.missingSet.source == "registry")
            #expect(running.missingSet.registry == registry.baseURL)
            #expect(running.sightings.recent.count >= 4)
            #expect(running.sightings.recent.allSatisfy { $0.bikeId.hasPrefix("bike-") })
            let human = try await BeacondRun(["status", "--control-socket", socket])
            #expect(human.status == 0)
            #expect(human.stdout.contains("healthy") && human.stdout.contains("7 bikes"), "\(human.stdout)")

            first.terminate()
            #expect(
                await first.waitForExit(seconds: 10) == 0, "SIGTERM did not end the daemon with 0:\n\(first.stderr)")
            let beforeRestart = registry.posts.count
            #expect(beforeRestart < 20, "the replay ended before SIGTERM; the test proves nothing about the restart")
            let messages = notify.receive().flatMap { $0 }
            #expect(messages.contains("READY=1"))
            #expect(messages.contains("WATCHDOG=1"), "a healthy daemon feeds the watchdog")
            #expect(messages.contains("STOPPING=1"))
            #expect(messages.contains { $0.hasPrefix("STATUS=") })
            #expect(first.stderr.split(separator: "\n").allSatisfy { $0.hasPrefix("<") }, "journal priority prefixes")

            // The daemon is gone: status says so.
            let gone = try await BeacondRun(["status", "--control-socket", socket])
            #expect(gone.status == 3)
            #expect(gone.stderr.contains("not running"))

            // Second run: the same replay, as fast as it goes, until everything is delivered. It starts from the
            // first run's cached list, and asks systemd for more time while it loads it (StartExtension), before
            // it is ready.
            let secondNotify = try NotifyListener(path: directory.file("notify-second.sock"))
            let second = try DaemonProcess(
                common + ["--speed", "0", "--exit-when-drained"], environment: ["NOTIFY_SOCKET": secondNotify.path],
                logDirectory: directory.path, name: "second")
            #expect(await second.waitForExit(seconds: 60) == 0, "second run:\n\(second.stderr)")
            let ready = await secondNotify.firstIndex(within: 10) { $0.contains("READY=1") }
            let extended = secondNotify.all.firstIndex { $0.contains("EXTEND_TIMEOUT_USEC=30000000") }
            #expect(ready != nil && extended != nil && extended! < ready!, "\(secondNotify.all)")
            #expect(
                secondNotify.all.contains { $0.contains("STATUS=loading the cached bike list: 0 MiB read") },
                "\(secondNotify.all)")

            // Every sighting of the capture reached the registry exactly once.
            let posts = registry.posts
            let ids = posts.compactMap { $0.body["sightingId"] }
            #expect(ids.count == Set(ids).count, "a sighting was posted twice")
            #expect(posts.allSatisfy { $0.idempotencyKey == $0.body["sightingId"] })
            let expected = try String(contentsOfFile: Self.groundTruth, encoding: .utf8).split(separator: "\n").map {
                line in
                let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                return "\(object["kind"]!) \(object["bikeId"]!) \(object["firstSeen"]!) \(object["lastSeen"]!)"
            }
            let received = posts.map {
                "\($0.body["kind"]!) \($0.body["bikeId"]!) \($0.body["firstSeen"]!) \($0.body["lastSeen"]!)"
            }
            #expect(received.sorted() == expected.sorted())
            #expect(posts.allSatisfy { $0.body["stationId"] == "e2e-station" && $0.body["latitude"] == "51.5" })

            // Nothing sent identifies a beacon by its MAC or carries owner data; no log line holds the key.
            let addresses = try await Self.addresses(in: Self.capture)
            #expect(addresses.count > 5)
            for post in posts {
                let body = post.raw.uppercased()
                for address in addresses {
                    #expect(!body.contains(address) && !body.contains(address.replacingOccurrences(of: ":", with: "")))
                }
                for secret in ["DEVICETOKEN", "SECRET-TOKEN", "OWNERNAME", "NOT FOR BEACOND"] {
                    #expect(!body.contains(secret))
                }
            }
            for log in [first.stderr, second.stderr] {
                #expect(!log.contains(Self.apiKey))
                #expect(!log.contains("SECRET-TOKEN"))
                for address in addresses {
                    #expect(!log.uppercased().contains(address), "a beacon's MAC address was logged")
                }
            }
        }
    }

    @Test func badConfigurationAndMissingFilesExitWithTheirStatus() async throws {
        let directory = try TemporaryDirectory("beacond-e2e")
        defer { directory.remove() }
        let base = [
            "run", "--state-dir", directory.file("state"), "--control-socket", directory.file("c.sock"), "--config",
            try Self.emptyConfig(in: directory),
        ]
        let badFlag = try await BeacondRun(base + ["--replay", Self.capture, "--refresh-interval", "soon"])
        #expect(badFlag.status == 78)
        #expect(badFlag.stderr.contains("--refresh-interval"))
        let noFile = try await BeacondRun(base + ["--replay", directory.file("missing.pcap")])
        #expect(noFile.status == 2)
        #expect(noFile.stderr.contains("missing.pcap"))
        // This machine's kernel has no Bluetooth and it runs no bluetoothd: each backend says which it lacks.
        for backend in ["hci", "monitor"] {
            let noRadio = try await BeacondRun(base + ["--backend", backend])
            #expect(noRadio.status == 69)
            #expect(noRadio.stderr.contains("this kernel has no Bluetooth support"))
        }
        let noBus = try await BeacondRun(base + ["--backend", "dbus"])
        #expect(noBus.status == 69)
        #expect(noBus.stderr.contains("cannot reach bluetoothd on the system bus"))
        let noKey = try await BeacondRun(
            base + [
                "--replay", Self.capture, "--registry", "http://127.0.0.1:9", "--api-key-file",
                directory.file("no-key"), "--station-id", "e2e",
            ])
        #expect(noKey.status == 78)
        #expect(noKey.stderr.contains("no-key"))
    }

    /// An empty configuration file, so a machine's /etc/beacond/beacond.conf cannot change the test.
    static func emptyConfig(in directory: TemporaryDirectory) throws -> String {
        let path = directory.file("beacond.conf")
        try "# defaults and flags only\n".write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static func status(socket: String) throws -> StatusReport {
        let response = try ControlClient.send("status", path: socket, timeoutSeconds: 2)
        return try #require(response.status)
    }

    /// Every advertiser's address in the capture, as `beacond replay` decodes them.
    static func addresses(in capture: String) async throws -> Set<String> {
        let run = try await BeacondRun(["replay", "--format", "jsonl", capture])
        return Set(try run.jsonLines.compactMap { $0["addr"] as? String }.map { $0.uppercased() })
    }
}

/// The README's first command: the daemon on the café capture with the embedded registry.
@Suite(.timeLimit(.minutes(20))) struct DemoCommandTests {
    @Test func theDemoShowsEverySightingAndEndsByItself() async throws {
        let run = try await BeacondRun([
            "demo", "--speed", "0", "--capture", DaemonEndToEndTests.capture, "--bikes", DaemonEndToEndTests.bikes,
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let rows = run.stdout.split(separator: "\n").filter {
            ["enter ", "update ", "exit "].contains(where: $0.hasPrefix)
        }
        let expected = try String(contentsOfFile: DaemonEndToEndTests.groundTruth, encoding: .utf8).split(
            separator: "\n"
        ).count
        #expect(rows.count == expected)
        #expect(run.stdout.contains("\(expected) sightings delivered to the embedded registry"))
        #expect(run.stderr.isEmpty, "warnings only, and there should be none: \(run.stderr)")
    }
}
