import BeaconTestSupport
import Foundation
import RegistryTestServer
import Testing

/// `beacond doctor` as a café owner runs it, against a real registry on loopback. This machine has no Bluetooth,
/// no system bus and no beacond.service, so those checks fail here, each naming its fix; the VM test
/// (Tests/systemd) sees them pass and breaks each in turn.
@Suite(.timeLimit(.minutes(20))) struct DoctorCommandTests {
    struct Station {
        let directory: TemporaryDirectory
        let registry: RegistryServer

        static func start(key: String = "right-key") async throws -> Station {
            let registry = RegistryServer()
            try await registry.start()
            registry.requireKey(key)
            registry.setBikes(
                #"[{"id":"bike-7","beaconMinor":7,"missing":true},{"id":"bike-8","beaconMinor":8,"missing":false}]"#)
            return Station(directory: try TemporaryDirectory("beacond-doctor"), registry: registry)
        }

        func config(registry url: String? = nil, key: String = "right-key", extra: String = "") throws -> String {
            try "\(key)\n".write(toFile: directory.file("key"), atomically: true, encoding: .utf8)
            let text = """
                station-id = doctor-test
                registry = \(url ?? "http://127.0.0.1:\(self.registry.port)")
                api-key-file = \(directory.file("key"))
                state-directory = \(directory.path)
                control-socket = \(directory.file("control.sock"))
                \(extra)
                """
            try text.write(toFile: directory.file("beacond.conf"), atomically: true, encoding: .utf8)
            return directory.file("beacond.conf")
        }

        func stop() async {
            await registry.stop()
            directory.remove()
        }
    }

    static func line(_ run: BeacondRun, _ check: String) -> String {
        run.stdout.split(separator: "\n").map(String.init).first { $0.dropFirst(6).hasPrefix(check + ":") }
            ?? "(no \(check) line)"
    }

    @Test func theRegistryAcceptsTheKeyOrNamesTheRefusal() async throws {
        let station = try await Station.start()
        try await withTeardown({ await station.stop() }) {
            let good = try await BeacondRun(["doctor", "--config", try station.config()])
            #expect(
                Self.line(good, "registry").hasPrefix(
                    "ok    registry: http://127.0.0.1:\(station.registry.port) answered with 1 missing bikes"),
                "\(good.stdout)")
            #expect(
                Self.line(good, "configuration").hasPrefix(
                    "ok    configuration: \(station.directory.file("beacond.conf")) is good"))
            #expect(
                Self.line(good, "state directory").hasPrefix(
                    "ok    state directory: \(station.directory.path): writable,"))
            // One conditional request per run, with the key in the query as the daemon sends it.
            let requests = station.registry.requests.filter { $0.path == "/bikes" }
            #expect(requests.count == 1)
            #expect(requests.first?.query?.contains("missing=true") == true)

            let wrong = try await BeacondRun(["doctor", "--config", try station.config(key: "wrong-key")])
            #expect(wrong.status == 1)
            let refused = Self.line(wrong, "registry")
            #expect(
                refused.hasPrefix(
                    "FAIL  registry: http://127.0.0.1:\(station.registry.port) refused the API key from \(station.directory.file("key")) (HTTP 401)"
                ), "\(refused)")
            #expect(refused.contains("→ fix: put this station's key in \(station.directory.file("key"))"))
            #expect(!wrong.stdout.contains("wrong-key") && !wrong.stderr.contains("wrong-key"), "the key was printed")
        }
    }

    /// The broker, when MQTT is configured: accepted over TLS with the broker's own authority; a wrong password is a
    /// FAIL naming the refusal and what to check, never the password; a broker that is not there is named too.
    @Test func theBrokerAcceptsTheStationOrNamesTheRefusal() async throws {
        let station = try await Station.start()
        try await withTeardown({ await station.stop() }) {
            let broker = try MosquittoBroker()
            let passwordFile = station.directory.file("mqtt-password")
            let mqtt = { (url: String, password: String) throws -> String in
                try "\(password)\n".write(toFile: passwordFile, atomically: true, encoding: .utf8)
                return try station.config(
                    extra: """
                        mqtt = \(url)
                        mqtt-username = \(MosquittoBroker.username)
                        mqtt-password-file = \(passwordFile)
                        mqtt-ca-file = \(broker.caFile)
                        """)
            }
            let good = try await BeacondRun([
                "doctor", "--config", try mqtt("mqtts://127.0.0.1:\(broker.tlsPort)", MosquittoBroker.password),
            ])
            #expect(
                Self.line(good, "mqtt")
                    == "ok    mqtt: mqtts://127.0.0.1:\(broker.tlsPort) accepted the station as station",
                "\(good.stdout)")

            let wrong = try await BeacondRun([
                "doctor", "--config", try mqtt("mqtt://127.0.0.1:\(broker.port)", "not it"),
            ])
            #expect(wrong.status == 1)
            let refused = Self.line(wrong, "mqtt")
            #expect(
                refused.hasPrefix("FAIL  mqtt: mqtt://127.0.0.1:\(broker.port) refuses the station: ")
                    && refused.contains("not authorised"), "\(wrong.stdout)")
            #expect(refused.contains("→ fix: check mqtt-username and the password in mqtt-password-file"), "\(refused)")
            #expect(!wrong.stdout.contains("not it") && !wrong.stderr.contains("not it"), "the password was printed")

            broker.stop()
            let away = try await BeacondRun([
                "doctor", "--config", try mqtt("mqtt://127.0.0.1:\(broker.port)", MosquittoBroker.password),
            ])
            #expect(
                Self.line(away, "mqtt").hasPrefix("FAIL  mqtt: cannot reach mqtt://127.0.0.1:\(broker.port)"),
                "\(away.stdout)")
        }
    }

    @Test func anUnreachableRegistryAndCleartextAreNamed() async throws {
        let station = try await Station.start()
        try await withTeardown({ await station.stop() }) {
            let closed = try await BeacondRun([
                "doctor", "--config", try station.config(registry: "http://127.0.0.1:9"),
            ])
            #expect(
                Self.line(closed, "registry").hasPrefix(
                    "FAIL  registry: cannot reach http://127.0.0.1:9: connection refused"), "\(closed.stdout)")

            // Credentials in the URL are never shown; plain http off this machine is a warning.
            let remote = try await BeacondRun([
                "doctor", "--config", try station.config(registry: "http://user:secret@192.0.2.1:9/api?token=abc"),
            ])
            #expect(!remote.stdout.contains("secret") && !remote.stdout.contains("abc"), "\(remote.stdout)")
            #expect(
                Self.line(remote, "registry").contains("http://REDACTED@192.0.2.1:9/api?token=REDACTED"),
                "\(remote.stdout)"
            )
        }
    }

    @Test func rotatingBeaconsNoRegionAdmitsAreAWarning() async throws {
        let station = try await Station.start()
        try await withTeardown({ await station.stop() }) {
            station.registry.setBikes(
                #"[{"id":"bike-7","beaconMinor":7,"missing":true},{"id":"rotating","missing":true,"beaconIdentities":[[4660,22136],[43981,52719]]}]"#
            )
            // The default region, FindMyBike's, names major 1: neither identity is under it.
            let named = try await BeacondRun(["doctor", "--config", try station.config()])
            #expect(
                Self.line(named, "registry").hasPrefix(
                    "warn  registry: http://127.0.0.1:\(station.registry.port) answered with 1 missing bikes; key from \(station.directory.file("key")) accepted, but 1 of them have rotating beacons"
                ), "\(named.stdout)")
            #expect(
                Self.line(named, "configuration").contains("names major 1, so it can never match a rotating beacon"))
            let uuid = "21EECF71-D5C7-4A00-9B90-27C94B5146EA"  // FindMyBike's, with no major
            let whole = try await BeacondRun(["doctor", "--config", try station.config(extra: "region = \(uuid)")])
            #expect(
                Self.line(whole, "registry").hasPrefix(
                    "ok    registry: http://127.0.0.1:\(station.registry.port) answered with 2 missing bikes"),
                "\(whole.stdout)")
            #expect(!Self.line(whole, "configuration").contains("rotating"))
        }
    }

    @Test func aBadConfigurationAndAMissingKeyFail() async throws {
        let station = try await Station.start()
        try await withTeardown({ await station.stop() }) {
            let bad = try await BeacondRun(["doctor", "--config", try station.config(extra: "scan-windw-ms = 50")])
            #expect(bad.status == 1)
            #expect(
                Self.line(bad, "configuration").hasPrefix(
                    "FAIL  configuration: \(station.directory.file("beacond.conf")): line 6: scan-windw-ms: unknown key"
                ),
                "\(bad.stdout)")

            let path = try station.config()
            try FileManager.default.removeItem(atPath: station.directory.file("key"))
            let keyless = try await BeacondRun(["doctor", "--config", path])
            #expect(
                Self.line(keyless, "registry").hasPrefix(
                    "FAIL  registry: API key file \(station.directory.file("key"))"),
                "\(keyless.stdout)")
        }
    }

    @Test func everyCheckIsOneLineAndTheJSONSaysTheSame() async throws {
        let station = try await Station.start()
        try await withTeardown({ await station.stop() }) {
            let path = try station.config()
            let text = try await BeacondRun(["doctor", "--config", path])
            let json = try await BeacondRun(["doctor", "--config", path, "--json"])
            let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
            let checks = try #require(object["checks"] as? [[String: Any]])
            let names = checks.compactMap { $0["check"] as? String }
            #expect(
                names == [
                    "configuration", "adapter hci0", "bluetoothd", "capabilities", "state directory", "registry",
                    "clock",
                    "service",
                ])
            #expect(text.stdout.split(separator: "\n").count == names.count)
            // Here: no Bluetooth in the kernel and no beacond running, so the run fails, and says so in both forms.
            #expect(object["passed"] as? Bool == false)
            #expect(text.status == 1 && json.status == 1)
            for check in checks where check["status"] as? String == "fail" {
                #expect((check["fix"] as? String)?.isEmpty == false, "\(check)")
            }
            #expect(
                Self.line(text, "service").hasPrefix(
                    "FAIL  service: no beacond.service is installed, and beacond is not running"))
        }
    }
}
