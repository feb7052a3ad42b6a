public import BeaconEngine
public import BeaconWire
public import TextFormats

/// Everything `beacond run` needs, from the configuration file with command-line flags on top.
/// Every key is also a flag of the same name (`station-id` → `--station-id`).
public struct DaemonConfiguration: Sendable {
    /// The capture's own enum: one list of the ways to the radio, from the configuration to the code that opens them.
    public typealias Backend = RadioBackend

    public var stationID = "beacond"
    public var latitude = 0.0
    public var longitude = 0.0
    public var regions: [BeaconRegion] = [.findMyBike]
    public var backend: Backend = .monitor
    public var adapters = ["hci0"]
    public var scanIntervalMilliseconds = 100.0
    public var scanWindowMilliseconds = 100.0
    /// Seconds without an advert (or without the station beacon, when one is set) before the recovery ladder.
    public var stallTimeout = 120
    /// nil: the embedded registry, `file://<state-directory>/bikes.json`.
    public var registry: String?
    public var authentication: RegistryAuthentication = .query
    public var apiKeyFile: String?
    public var refreshInterval = 300
    public var reportInterval = 600
    public var exitTimeout = 30
    public var stationBeacon: BeaconIdentity?
    public var stationSilence = 120
    public var stateDirectory = "/var/lib/beacond"
    public var controlSocket = "/run/beacond/control.sock"
    public var outboxCapacity = 100_000
    /// Seconds a sighting heard before the system clock was synchronised waits for it before it is sent anyway,
    /// marked `clockSynchronized: false`.
    public var clockSyncWait = 600
    /// Milliseconds adverts gather after the first wakes the capture thread, before it reads them all (0: at once).
    public var captureGatherMilliseconds = 50
    /// The MQTT broker sightings also go to (`mqtt://host[:port]`, `mqtts://…`); nil: no MQTT.
    public var mqtt: MQTTAddress?
    public var mqttUsername: String?
    /// The broker password's file; nil: the systemd credential `mqtt-password`, if there is one.
    public var mqttPasswordFile: String?
    /// The authority that signed an mqtts:// broker's certificate; nil: the system's store.
    public var mqttCAFile: String?
    /// nil: `beacond/<station-id>`.
    public var mqttTopicPrefix: String?

    /// Where `/metrics` is served for Prometheus (`metrics-listen`); nil: nowhere.
    public var metricsListen: MetricsAddress?

    /// Where the station's topics live: `<prefix>/sighting`, `<prefix>/status`.
    public var mqttPrefix: String { mqttTopicPrefix ?? "beacond/\(stationID)" }

    /// systemd's directories, when the service runs under it, are the defaults for state and the socket.
    public init(environment: [String: String] = [:]) {
        if let state = environment["STATE_DIRECTORY"]?.split(separator: ":").first { stateDirectory = String(state) }
        if let runtime = environment["RUNTIME_DIRECTORY"]?.split(separator: ":").first {
            controlSocket = String(runtime) + "/control.sock"
        }
    }

    /// Applies file entries, then the environment's `BEACOND_…` variables, then flag entries (which win), collecting
    /// every error rather than stopping at the first, so `check-config` can list them all.
    public static func load(
        file: [ConfigFile.Entry], flags: [ConfigFile.Entry], environment: [String: String] = [:]
    ) -> (DaemonConfiguration, [ConfigError]) {
        var configuration = DaemonConfiguration(environment: environment)
        var errors: [ConfigError] = []
        for entries in [file, environmentEntries(environment), flags] {
            var seen: [String: Int?] = [:]
            var lists: [String: (key: ConfigKey, given: [ConfigFile.Entry])] = [:]
            for entry in entries {
                guard let key = tableByName[entry.key] else {
                    errors.append(ConfigError(key: entry.key, line: entry.line, reason: "unknown key"))
                    continue
                }
                if key.repeatable {
                    lists[entry.key, default: (key, [])].given.append(entry)
                    continue
                }
                if let earlier = seen[entry.key] {
                    let firstLine = earlier.map { " (first on line \($0))" } ?? ""
                    errors.append(ConfigError(key: entry.key, line: entry.line, reason: "given twice\(firstLine)"))
                    continue
                }
                seen[entry.key] = entry.line
                if let (reason, _) = key.apply(&configuration, [entry.value]) {
                    errors.append(
                        ConfigError(key: entry.key, line: entry.line, reason: reason, variable: entry.variable))
                }
            }
            // A list given in a later source replaces the earlier one whole.
            for (name, list) in lists.sorted(by: { $0.key < $1.key }) {
                if let (reason, index) = list.key.apply(&configuration, list.given.map(\.value)) {
                    let given = list.given[index]
                    errors.append(ConfigError(key: name, line: given.line, reason: reason, variable: given.variable))
                }
            }
        }
        errors += configuration.crossChecks()
        // In file order; flags (line 0) first, then problems that belong to no single line.
        let ordered = errors.enumerated().sorted {
            ($0.element.line ?? .max, $0.offset) < ($1.element.line ?? .max, $1.offset)
        }
        return (configuration, ordered.map(\.element))
    }

    /// The variable a key is read from: `station-id` → `BEACOND_STATION_ID`.
    public static func variable(_ key: String) -> String {
        ConfigFile.variable(for: key, prefix: "BEACOND_")
    }

    /// Each key's variable that the environment sets, as entries; a repeatable key's values separated by commas
    /// (`BEACOND_ADAPTER=hci0,hci1`). Variables of the prefix that name no key are left alone: the tests' and
    /// the tools' own (`BEACOND_ARTIFACTS`) share it.
    static func environmentEntries(_ environment: [String: String]) -> [ConfigFile.Entry] {
        table.flatMap { key -> [ConfigFile.Entry] in
            let variable = variable(key.name)
            guard let value = environment[variable] else { return [] }
            let values = key.repeatable ? value.split(separator: ",").map(String.init) : [value]
            return values.map { ConfigFile.Entry(key: key.name, value: $0, line: 0, variable: variable) }
        }
    }

    func crossChecks() -> [ConfigError] {
        var errors: [ConfigError] = []
        if scanWindowMilliseconds > scanIntervalMilliseconds {
            errors.append(ConfigError(key: "scan-window-ms", reason: "must not be longer than scan-interval-ms"))
        }
        if let registry, registry.hasPrefix("http"), stationID == "beacond" {
            errors.append(
                ConfigError(key: "station-id", reason: "name this station when reporting to a remote registry"))
        }
        return errors
    }

    /// The registry location, the embedded one by default.
    public var registryLocation: RegistryLocation {
        let sightings = stateDirectory + "/sightings.jsonl"
        return RegistryLocation(
            registry ?? "file://\(stateDirectory)/bikes.json", sightingsFile: sightings)
            ?? .file(bikes: stateDirectory + "/bikes.json", sightings: sightings)
    }

    public var engineConfiguration: EngineConfiguration {
        EngineConfiguration(
            stationID: stationID, regions: regions, exitTimeout: .seconds(exitTimeout),
            reportInterval: .seconds(reportInterval),
            stationBeacon: stationBeacon, stationSilenceLimit: .seconds(stationSilence))
    }
}

/// `00:1A:7D:DA:71:13`.
enum BluetoothAddressText {
    static func isValid(_ text: String) -> Bool {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        return parts.count == 6 && parts.allSatisfy { $0.count == 2 && UInt8($0, radix: 16) != nil }
    }
}
