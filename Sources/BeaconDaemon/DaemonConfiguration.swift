public import BeaconCapture
public import BeaconEngine
public import BeaconRegistryClient
public import BeaconWire
public import Logging

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
    public var authentication: RegistryConfiguration.Authentication = .query
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

    /// The keys the file and the flags know, for `--help` and for "unknown key" errors.
    public static let keys = [
        "station-id", "latitude", "longitude", "region", "backend", "adapter", "scan-interval-ms", "scan-window-ms",
        "stall-timeout",
        "registry", "auth", "api-key-file", "refresh-interval", "report-interval", "exit-timeout", "station-beacon",
        "station-silence", "state-directory", "control-socket", "outbox-capacity", "clock-sync-wait",
        "capture-gather-ms",
    ]
    static let repeatable: Set<String> = ["region", "adapter"]

    /// systemd's directories, when the service runs under it, are the defaults for state and the socket.
    public init(environment: [String: String] = [:]) {
        if let state = environment["STATE_DIRECTORY"]?.split(separator: ":").first { stateDirectory = String(state) }
        if let runtime = environment["RUNTIME_DIRECTORY"]?.split(separator: ":").first {
            controlSocket = String(runtime) + "/control.sock"
        }
    }

    /// Applies file entries, then flag entries (which win), collecting every error rather than stopping at
    /// the first, so `check-config` can list them all.
    public static func load(
        file: [ConfigFile.Entry], flags: [ConfigFile.Entry], environment: [String: String] = [:]
    ) -> (DaemonConfiguration, [ConfigError]) {
        var configuration = DaemonConfiguration(environment: environment)
        var errors: [ConfigError] = []
        for (source, entries) in [("file", file), ("flags", flags)] {
            var seen: [String: Int?] = [:]
            var lists: [String: [String]] = [:]
            for entry in entries {
                guard keys.contains(entry.key) else {
                    errors.append(ConfigError(key: entry.key, line: entry.line, reason: "unknown key"))
                    continue
                }
                if repeatable.contains(entry.key) {
                    lists[entry.key, default: []].append(entry.value)
                    continue
                }
                if let earlier = seen[entry.key] {
                    let firstLine = earlier.map { " (first on line \($0))" } ?? ""
                    errors.append(ConfigError(key: entry.key, line: entry.line, reason: "given twice\(firstLine)"))
                    continue
                }
                seen[entry.key] = entry.line
                if let reason = configuration.set(entry.key, entry.value) {
                    errors.append(ConfigError(key: entry.key, line: entry.line, reason: reason))
                }
            }
            // A list given in a later source replaces the earlier one whole.
            for (key, values) in lists.sorted(by: { $0.key < $1.key }) {
                if let (reason, index) = configuration.setList(key, values) {
                    let line = entries.filter { $0.key == key }[index].line
                    errors.append(ConfigError(key: key, line: source == "file" ? line : 0, reason: reason))
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

    /// Sets one scalar; returns why the value is wrong, if it is.
    mutating func set(_ key: String, _ value: String) -> String? {
        func integer(_ range: ClosedRange<Int>, _ apply: (inout DaemonConfiguration, Int) -> Void) -> String? {
            guard let number = Int(value), range.contains(number) else {
                return "expected a whole number from \(range.lowerBound) to \(range.upperBound), got \"\(value)\""
            }
            apply(&self, number)
            return nil
        }
        func decimal(_ range: ClosedRange<Double>, _ apply: (inout DaemonConfiguration, Double) -> Void) -> String? {
            guard let number = Double(value), number.isFinite, range.contains(number) else {
                return "expected a number from \(range.lowerBound) to \(range.upperBound), got \"\(value)\""
            }
            apply(&self, number)
            return nil
        }
        switch key {
        case "station-id":
            guard !value.isEmpty, value.count <= 64,
                value.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) })
            else { return "expected 1 to 64 letters, digits, '-', '_' or '.', got \"\(value)\"" }
            stationID = value
        case "latitude": return decimal(-90...90) { $0.latitude = $1 }
        case "longitude": return decimal(-180...180) { $0.longitude = $1 }
        case "backend":
            guard let backend = Backend(rawValue: value) else {
                return "expected \(Backend.spelledOut), got \"\(value)\""
            }
            self.backend = backend
        case "scan-interval-ms": return decimal(2.5...10_240) { $0.scanIntervalMilliseconds = $1 }
        case "scan-window-ms": return decimal(2.5...10_240) { $0.scanWindowMilliseconds = $1 }
        case "registry":
            guard RegistryConfiguration.location(value, sightingsFile: "") != nil else {
                return "expected an http://, https:// or file:/// URL, got \"\(value)\""
            }
            registry = value
        case "auth":
            guard let mode = RegistryConfiguration.Authentication(rawValue: value) else {
                return "expected query or bearer, got \"\(value)\""
            }
            authentication = mode
        case "api-key-file":
            guard value.hasPrefix("/") else { return "expected an absolute path, got \"\(value)\"" }
            apiKeyFile = value
        case "refresh-interval": return integer(10...86_400) { $0.refreshInterval = $1 }
        case "report-interval": return integer(10...86_400) { $0.reportInterval = $1 }
        case "exit-timeout": return integer(1...3_600) { $0.exitTimeout = $1 }
        case "station-beacon":
            guard let beacon = BeaconIdentity(value) else { return "expected UUID:MAJOR:MINOR, got \"\(value)\"" }
            stationBeacon = beacon
        case "station-silence": return integer(10...86_400) { $0.stationSilence = $1 }
        case "stall-timeout": return integer(2...86_400) { $0.stallTimeout = $1 }
        case "state-directory":
            guard value.hasPrefix("/") else { return "expected an absolute path, got \"\(value)\"" }
            stateDirectory = value
        case "control-socket":
            guard value.hasPrefix("/"), value.utf8.count < 108 else {
                return "expected an absolute path under 108 bytes (the limit of a Unix socket address)"
            }
            controlSocket = value
        case "outbox-capacity": return integer(100...10_000_000) { $0.outboxCapacity = $1 }
        case "clock-sync-wait": return integer(0...86_400) { $0.clockSyncWait = $1 }
        case "capture-gather-ms": return integer(0...200) { $0.captureGatherMilliseconds = $1 }
        default: return "unknown key"
        }
        return nil
    }

    /// Sets a list; returns why and which value is wrong, if one is.
    mutating func setList(_ key: String, _ values: [String]) -> (reason: String, index: Int)? {
        switch key {
        case "region":
            var parsed: [BeaconRegion] = []
            for (index, value) in values.enumerated() {
                guard let region = BeaconRegion(value) else {
                    return ("expected UUID or UUID:MAJOR, got \"\(value)\"", index)
                }
                parsed.append(region)
            }
            regions = parsed
        case "adapter":
            for (index, value) in values.enumerated()
            where !(value.hasPrefix("hci") && Int(value.dropFirst(3)) != nil) && !BluetoothAddressText.isValid(value) {
                return ("expected an adapter name (hci0) or address (00:1A:7D:DA:71:13), got \"\(value)\"", index)
            }
            adapters = values
        default: return ("unknown key", 0)
        }
        return nil
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
    public var registryLocation: RegistryConfiguration.Location {
        let sightings = stateDirectory + "/sightings.jsonl"
        return RegistryConfiguration.location(
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

extension DaemonConfiguration {
    /// The registry's API key as `run` loads it: `api-key-file`, else the systemd credential `registry-api-key`
    /// (`$CREDENTIALS_DIRECTORY`); nil when neither is there. A file that is missing, empty, a directory or
    /// unreadable is an error naming the file, the same in `run` and `check-config`.
    public func apiKey(environment: [String: String]) throws(RegistryError) -> APIKey? {
        if let path = apiKeyFile { return try APIKey.load(path: path) }
        return try APIKey.fromCredentials(name: "registry-api-key", environment: environment)
    }

    /// The registry as it may be shown: user-info and key-like query values redacted.
    public var registryShown: String {
        registry.map(RegistryAddress.redacted) ?? "file://\(stateDirectory)/bikes.json (embedded)"
    }

    /// Says so when the key would cross a network in clear: an `http://` registry off this machine.
    public func warnIfKeyTravelsInClear(logger: Logger) {
        guard let registry, RegistryAddress.sendsKeyInClear(registry) else { return }
        logger.warning(
            "the registry is plain http:// on another machine: the API key crosses the network readable; use https://",
            metadata: ["registry": "\(RegistryAddress.redacted(registry))"])
    }
}
