import BeaconEngine
import BeaconTestSupport
import BeaconWire
import Foundation
import StationSettings
import Testing
import TextFormats

@Suite(.timeLimit(.minutes(20))) struct ConfigurationTests {
    static func load(_ text: String, flags: [(String, String)] = [], environment: [String: String] = [:]) -> (
        DaemonConfiguration, [ConfigError]
    ) {
        let file = ConfigFile(text: text)
        let (configuration, errors) = DaemonConfiguration.load(
            file: file.entries, flags: flags.map { ConfigFile.Entry(key: $0.0, value: $0.1, line: 0) },
            environment: environment)
        return (configuration, file.errors + errors)
    }

    @Test func defaultsAreTheIssuesAndSystemdsDirectoriesWin() {
        let (configuration, errors) = Self.load(
            "", environment: ["STATE_DIRECTORY": "/var/lib/beacond", "RUNTIME_DIRECTORY": "/run/beacond"])
        #expect(errors.isEmpty)
        #expect(configuration.regions == [.findMyBike])
        #expect(
            configuration.exitTimeout == 30 && configuration.reportInterval == 600
                && configuration.refreshInterval == 300)
        #expect(configuration.controlSocket == "/run/beacond/control.sock")
        #expect(
            configuration.registryLocation
                == .file(bikes: "/var/lib/beacond/bikes.json", sightings: "/var/lib/beacond/sightings.jsonl"))
    }

    @Test func theEnvironmentSetsEveryKeyOverTheFileAndUnderTheFlags() {
        let (configuration, errors) = Self.load(
            "station-id = from-file\nexit-timeout = 40\nadapter = hci9\n",
            flags: [("exit-timeout", "50")],
            environment: [
                "BEACOND_STATION_ID": "from-environment", "BEACOND_EXIT_TIMEOUT": "45",
                "BEACOND_ADAPTER": "hci0,00:1A:7D:DA:71:13", "BEACOND_ARTIFACTS": "/tmp/not-a-key",
            ])
        #expect(errors.isEmpty, "\(errors)")
        #expect(configuration.stationID == "from-environment")
        #expect(configuration.exitTimeout == 50)
        #expect(configuration.adapters == ["hci0", "00:1A:7D:DA:71:13"])
        // Every key has its variable, spelt from its name; a value it refuses names it (a username takes any text).
        #expect(DaemonConfiguration.variable("api-key-file") == "BEACOND_API_KEY_FILE")
        for key in DaemonConfiguration.keys {
            let (_, refused) = Self.load("", environment: [DaemonConfiguration.variable(key): "\u{1}bad"])
            #expect(
                refused.contains { $0.key == key && $0.variable == DaemonConfiguration.variable(key) }
                    || key == "mqtt-username",
                "\(key): \(refused)")
        }
    }

    @Test func aBadValueFromTheEnvironmentNamesItsVariable() {
        let (_, errors) = Self.load("", environment: ["BEACOND_REFRESH_INTERVAL": "often"])
        #expect(
            errors.map(\.description) == [
                "BEACOND_REFRESH_INTERVAL: refresh-interval: expected a whole number from 10 to 86400, got \"often\""
            ])
    }

    @Test func aFullFileAndFlagsThatOverrideIt() {
        let (configuration, errors) = Self.load(
            """
            # Café Rosa, Hebden Bridge
            station-id = cafe-rosa
            latitude = 53.742
            longitude = -2.014
            region = 21EECF71-D5C7-4A00-9B90-27C94B5146EA:1
            region = E2C56DB5-DFFB-48D2-B060-D0F5A71096E0
            backend = hci
            adapter = hci1
            registry = "https://registry.example/api"
            auth = bearer
            api-key-file = /etc/beacond/api-key
            station-beacon = 21EECF71-D5C7-4A00-9B90-27C94B5146EA:2:1
            exit-timeout = 45
            """, flags: [("exit-timeout", "60"), ("adapter", "00:1A:7D:DA:71:13"), ("adapter", "hci0")])
        #expect(errors.isEmpty, "\(errors)")
        #expect(configuration.stationID == "cafe-rosa" && configuration.latitude == 53.742)
        #expect(configuration.regions.count == 2 && configuration.regions[1].major == nil)
        #expect(configuration.backend == .hci && configuration.authentication == .bearer)
        #expect(configuration.exitTimeout == 60, "the flag wins")
        #expect(configuration.adapters == ["00:1A:7D:DA:71:13", "hci0"], "a list given as flags replaces the file's")
        #expect(configuration.registryLocation == .http(base: "https://registry.example/api"))
        #expect(configuration.stationBeacon?.minor == 1)
    }

    @Test func everyErrorIsListedWithItsKeyAndLine() {
        let (_, errors) = Self.load(
            """
            station-id = café rosa
            latitude = 95
            region = 21EECF71-D5C7-4A00-9B90-27C94B5146EA
            region = nonsense
            scan-interval-ms = 50
            scan-window-ms = 100
            registry = ftp://example
            exit-timeout = 0
            exit-timeout = 30
            colour = red
            no equals sign here
            control-socket = relative/path
            """, flags: [("backend", "bluetooth"), ("adapter", "wlan0")])
        let described = errors.map(\.description)
        let expected = [
            "line 1: station-id:", "line 2: latitude:", "line 4: region: expected UUID or UUID:MAJOR, got \"nonsense\"",
            "line 7: registry:", "line 8: exit-timeout:", "line 9: exit-timeout: given twice (first on line 8)",
            "line 10: colour: unknown key", "line 11: no equals sign here: expected key = value",
            "line 12: control-socket:",
            "backend: expected hci, monitor or dbus", "adapter: expected an adapter name",
            "scan-window-ms: must not be longer",
        ]
        for prefix in expected {
            #expect(
                described.contains { $0.hasPrefix(prefix) || $0.contains(prefix) }, "missing \(prefix) in \(described)")
        }
        #expect(errors.count == expected.count, "\(described)")
    }

    @Test func aRemoteRegistryNeedsAStationName() {
        let (_, errors) = Self.load("registry = https://registry.example/api")
        #expect(errors.map(\.key) == ["station-id"])
    }
}

/// The example shipped for /etc/beacond must stay a good configuration, with every key it names known.
@Suite(.timeLimit(.minutes(20))) struct ExampleConfigurationTests {
    @Test func theShippedExampleIsGoodAndNamesEveryKey() throws {
        let path = Fixtures.repositoryRoot.appendingPathComponent("systemd/beacond.conf").path
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let (configuration, errors) = ConfigurationTests.load(text)
        #expect(errors.isEmpty, "\(errors)")
        #expect(configuration.stationID == "cafe-example")
        // Commented-out keys count too: the example documents all of them.
        for key in DaemonConfiguration.keys {
            #expect(text.contains("\(key) = "), "the example does not mention \(key)")
        }
    }

    @Test func reloadComparesEveryKey() {
        let (base, _) = ConfigurationTests.load("")
        for key in DaemonConfiguration.keys { #expect(base.settings[key] != nil, "\(key) missing from settings") }
        let (changed, _) = ConfigurationTests.load(
            "report-interval = 900\nregistry = https://r.example/api\nstation-id = x")
        #expect(changed.changedKeys(from: base) == ["registry", "report-interval", "station-id"])
    }
}
