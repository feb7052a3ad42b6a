import BeaconControl
import BeaconDaemon
import BeaconPOSIX
import BeaconTestSupport
import Foundation
import RegistryTestServer
import Testing

/// The running daemon's control surface: the socket's protocol and permissions, health and the watchdog,
/// SIGHUP.
@Suite(.serialized, .timeLimit(.minutes(20))) struct DaemonControlTests {
    /// A station beacon that is not in the café capture: the daemon must call itself unhealthy, stop feeding
    /// the watchdog, and say why.
    @Test func aSilentStationBeaconMakesTheDaemonUnhealthyAndStarvesTheWatchdog() async throws {
        let directory = try TemporaryDirectory("beacond-control")
        defer { directory.remove() }
        let socket = directory.file("control.sock")
        let notify = try NotifyListener(path: directory.file("notify.sock"))
        try FileManager.default.createDirectory(atPath: directory.file("state"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: DaemonEndToEndTests.bikes, toPath: directory.file("state/bikes.json"))
        let daemon = try DaemonProcess(
            [
                "run", "--config", try DaemonEndToEndTests.emptyConfig(in: directory), "--replay",
                DaemonEndToEndTests.capture,
                "--speed", "30", "--state-dir", directory.file("state"), "--control-socket", socket,
                "--station-beacon", "11111111-2222-3333-4444-555555555555:7:7", "--station-silence", "10",
            ],
            environment: ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "1000000"], logDirectory: directory.path,
            name: "silent")

        var report: StatusReport?
        for _ in 0..<100 where daemon.isRunning {
            if let status = try? DaemonEndToEndTests.status(socket: socket), !status.healthy,
                status.capture.iBeacons > 0
            {
                report = status
                break
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        let unhealthy = try #require(report, "never unhealthy:\n\(daemon.stderr)")
        #expect(unhealthy.problems.contains { $0.contains("station beacon silent") })
        #expect(unhealthy.capture.stationBeacon?.healthy == false)
        #expect(unhealthy.capture.stationBeacon?.lastHeard == nil)
        let status = try await BeacondRun(["status", "--control-socket", socket])
        #expect(status.status == 1)
        #expect(status.stdout.contains("UNHEALTHY") && status.stdout.contains("never heard"), "\(status.stdout)")

        // The health loop (every 0.5 s with a 1 s watchdog) pinged while the daemon ran; the tick that found it stuck
        // said so in STATUS= and did not ping, and no tick has since (checked again at the end of this test).
        let turned = await notify.firstIndex(within: 10) { message in
            message.contains { $0.hasPrefix("STATUS=UNHEALTHY") && $0.contains("station beacon silent") }
        }
        let unhealthyTick = try #require(turned, "no STATUS= saying why:\n\(notify.all)")
        #expect(notify.all[..<unhealthyTick].joined().contains("WATCHDOG=1"), "it pinged before: \(notify.all)")
        #expect(!notify.all[unhealthyTick...].joined().contains("WATCHDOG=1"), "\(notify.all[unhealthyTick...])")

        // The protocol: bad requests get a reason, not a hang or a crash.
        #expect(try Self.exchange(socket, "this is not json\n").contains("one JSON object"))
        #expect(try Self.exchange(socket, #"{"request":"reboot"}"# + "\n").contains("known: status, refresh"))
        #expect(try Self.exchange(socket, String(repeating: "x", count: 10_000)).contains(#""ok":false"#))
        // Root may refresh.
        let refresh = try await BeacondRun(["refresh", "--control-socket", socket])
        #expect(refresh.status == 0, "\(refresh.stderr)")
        // The socket is the daemon's user's and group's only.
        var information = stat()
        #expect(stat(socket, &information) == 0)
        #expect(information.st_mode & 0o777 == 0o660)

        #expect(!notify.all[unhealthyTick...].joined().contains("WATCHDOG=1"), "\(notify.all[unhealthyTick...])")

        daemon.terminate()
        #expect(await daemon.waitForExit(seconds: 10) == 0)
        #expect(!FileManager.default.fileExists(atPath: socket), "the socket file is removed at exit")
    }

    /// SIGHUP: a broken file is refused whole and the daemon keeps going; a good one with a new API key is
    /// applied at once and the set refreshed with it.
    @Test func sighupReloadsTheRegistryKeyAndRefusesABrokenFile() async throws {
        let registry = RegistryServer()
        try await registry.start()
        try await withTeardown({ await registry.stop() }) {
            registry.setBikes(try String(contentsOfFile: DaemonEndToEndTests.bikes, encoding: .utf8))
            registry.requireKey("old-key-1")
            let directory = try TemporaryDirectory("beacond-control")
            defer { directory.remove() }
            let keyFile = directory.file("key")
            try "old-key-1\n".write(toFile: keyFile, atomically: true, encoding: .utf8)
            let config = directory.file("beacond.conf")
            let good = """
                station-id = hup-test
                registry = \(registry.baseURL)
                api-key-file = \(keyFile)
                state-directory = \(directory.file("state"))
                control-socket = \(directory.file("control.sock"))

                """
            try good.write(toFile: config, atomically: true, encoding: .utf8)
            let daemon = try DaemonProcess(
                ["run", "--config", config, "--replay", DaemonEndToEndTests.capture, "--speed", "1"],
                logDirectory: directory.path, name: "hup")
            let socket = directory.file("control.sock")
            try await Self.waitFor("the first refresh", daemon) {
                (try? DaemonEndToEndTests.status(socket: socket))?.missingSet.source == "registry"
            }

            // A broken file: refused, logged, the daemon carries on.
            try (good + "refresh-interval = often\n").write(toFile: config, atomically: true, encoding: .utf8)
            daemon.process.send(SIGHUP)
            try await Self.waitFor("the refusal", daemon) { daemon.stderr.contains("configuration not reloaded") }
            #expect(daemon.stderr.contains("refresh-interval"))
            #expect(daemon.isRunning)

            // The key rotates: the registry wants the new one, the file holds it, SIGHUP applies it.
            registry.requireKey("new-key-2")
            try "new-key-2\n".write(toFile: keyFile, atomically: true, encoding: .utf8)
            try (good + "report-interval = 900\n").write(toFile: config, atomically: true, encoding: .utf8)
            let before = registry.requests.count
            daemon.process.send(SIGHUP)
            try await Self.waitFor("a refresh with the new key", daemon) {
                registry.requests.dropFirst(before).contains {
                    $0.path.hasSuffix("bikes") && ($0.query ?? "").contains("new-key-2")
                }
            }
            try await Self.waitFor("a clean refresh", daemon) {
                (try? DaemonEndToEndTests.status(socket: socket))?.missingSet.lastError == nil
            }
            #expect(daemon.stderr.contains("configuration reloaded"))
            #expect(daemon.stderr.contains("report-interval"), "a key that needs a restart is named")
            #expect(!daemon.stderr.contains("new-key-2") && !daemon.stderr.contains("old-key-1"))

            // A new registry: status names it from then on (it named the first one for ever).
            let second = RegistryServer()
            try await second.start()
            try await withTeardown({ await second.stop() }) {
                second.setBikes(try String(contentsOfFile: DaemonEndToEndTests.bikes, encoding: .utf8))
                second.requireKey("new-key-2")
                try good.replacingOccurrences(of: registry.baseURL, with: second.baseURL).write(
                    toFile: config, atomically: true, encoding: .utf8)
                daemon.process.send(SIGHUP)
                try await Self.waitFor("status naming the new registry", daemon) {
                    (try? DaemonEndToEndTests.status(socket: socket))?.missingSet.registry == second.baseURL
                }
                try await Self.waitFor("the new registry asked for the bikes", daemon) {
                    second.requests.contains { $0.path.hasSuffix("bikes") }
                }

                daemon.terminate()
                #expect(await daemon.waitForExit(seconds: 10) == 0)
            }
        }
    }

    static func waitFor(_ what: String, _ daemon: DaemonProcess, _ condition: () throws -> Bool) async throws {
        for _ in 0..<200 {
            if try condition() { return }
            guard daemon.isRunning else { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("timed out waiting for \(what):\n\(daemon.stderr)")
        throw CancellationError()
    }

    /// Sends raw bytes to the control socket and returns the answer, for requests the client never makes.
    static func exchange(_ socket: String, _ request: String) throws -> String {
        let client = try ControlSocketTests.connect(socket, sending: request)
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(client.descriptor, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            answer += buffer[..<count]
        }
        return String(decoding: answer, as: UTF8.self)
    }
}
