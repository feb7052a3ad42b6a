public import ArgumentParser
import BeaconCapture
public import BeaconDaemon
import BeaconPOSIX
import SystemPackage

/// The configuration flags `run` and `check-config` share: `--config` and one flag per configuration key,
/// each overriding the file.
public struct ConfigOptions: ParsableArguments {
    public static let defaultPath = "/etc/beacond/beacond.conf"

    @Option(
        help: ArgumentHelp(
            "Configuration file (default \(ConfigOptions.defaultPath), if it exists).", valueName: "path"))
    public var config: String?

    @Option(help: "Station id, named in every sighting and its id.") public var stationId: String?
    // .unconditional: the next argument is the value even when it starts with '-', so a café west of Greenwich
    // or south of the equator types `--longitude -0.12`, not `--longitude=-0.12`.
    @Option(parsing: .unconditional, help: "Station latitude, sent with each sighting.") public var latitude: String?
    @Option(parsing: .unconditional, help: "Station longitude (negative west of Greenwich).") public var longitude:
        String?
    @Option(
        help: ArgumentHelp(
            "Beacon region (repeatable; default the FindMyBike region, major 1).", valueName: "uuid[:major]"))
    public var region: [String] = []
    @Option(help: "Capture backend: hci, monitor or dbus.") public var backend: String?
    @Option(help: ArgumentHelp("Adapter name or address (repeatable; default hci0).", valueName: "hciN|address"))
    public var adapter: [String] = []
    @Option(name: .customLong("scan-interval-ms"), help: "LE scan interval, milliseconds.") public var scanIntervalMs:
        String?
    @Option(name: .customLong("scan-window-ms"), help: "LE scan window, milliseconds.") public var scanWindowMs: String?
    @Option(
        help: ArgumentHelp(
            "Registry: https://… or file:///…/bikes.json (default file://STATE/bikes.json).", valueName: "url"))
    public var registry: String?
    @Option(help: "How the API key is sent: query (?key=) or bearer.") public var auth: String?
    @Option(
        help: ArgumentHelp(
            "File holding the registry API key (or use the systemd credential registry-api-key).", valueName: "path"))
    public var apiKeyFile: String?
    @Option(help: ArgumentHelp("Seconds between missing-set refreshes (default 300).", valueName: "s")) public
        var refreshInterval: String?
    @Option(
        help: ArgumentHelp("At most one update sighting per visit per this many seconds (default 600).", valueName: "s")
    )
    public var reportInterval: String?
    @Option(help: ArgumentHelp("Seconds of silence after which a beacon has left (default 30).", valueName: "s")) public
        var exitTimeout: String?
    @Option(help: ArgumentHelp("The café's own beacon.", valueName: "uuid:major:minor")) public var stationBeacon:
        String?
    @Option(
        help: ArgumentHelp(
            "Seconds the station beacon may be silent before capture is unhealthy (default 120).", valueName: "s"))
    public var stationSilence: String?
    @Option(
        help: ArgumentHelp(
            "Seconds without an advert (or without the station beacon, when set) before the scan is recovered: rescan, power-cycle, device reset, rfkill unblock (default 120).",
            valueName: "s"))
    public var stallTimeout: String?
    // --state-directory as the key is named (the README promises every key is a flag of its name); --state-dir, the
    // name it had first, still works.
    @Option(
        name: [.customLong("state-directory"), .customLong("state-dir")],
        help: ArgumentHelp("State directory: outbox, bike cache (default /var/lib/beacond).", valueName: "path"))
    public var stateDir: String?
    @Option(help: ArgumentHelp("Control socket (default /run/beacond/control.sock).", valueName: "path")) public
        var controlSocket: String?
    @Option(help: ArgumentHelp("Most sightings the outbox holds (default 100000).", valueName: "rows")) public
        var outboxCapacity: String?
    @Option(
        name: .customLong("clock-sync-wait"),
        help: ArgumentHelp(
            "Seconds a sighting heard before the system clock is synchronised waits for it, then goes marked clockSynchronized: false (default 600).",
            valueName: "s"))
    public var clockSyncWait: String?
    @Option(
        name: .customLong("capture-gather-ms"),
        help: ArgumentHelp(
            "Milliseconds adverts gather after the first wakes the capture thread, before all are read at once (default 50; 0: each as it comes).",
            valueName: "ms"))
    public var captureGatherMs: String?

    public init() {}

    /// The flags given, as configuration entries.
    var flagEntries: [ConfigFile.Entry] {
        var entries: [ConfigFile.Entry] = []
        func add(_ key: String, _ value: String?) {
            if let value { entries.append(ConfigFile.Entry(key: key, value: value, line: 0)) }
        }
        add("station-id", stationId)
        add("latitude", latitude)
        add("longitude", longitude)
        for value in region { add("region", value) }
        add("backend", backend)
        for value in adapter { add("adapter", value) }
        add("scan-interval-ms", scanIntervalMs)
        add("scan-window-ms", scanWindowMs)
        add("registry", registry)
        add("auth", auth)
        add("api-key-file", apiKeyFile)
        add("refresh-interval", refreshInterval)
        add("report-interval", reportInterval)
        add("exit-timeout", exitTimeout)
        add("station-beacon", stationBeacon)
        add("station-silence", stationSilence)
        add("stall-timeout", stallTimeout)
        add("state-directory", stateDir)
        add("control-socket", controlSocket)
        add("outbox-capacity", outboxCapacity)
        add("clock-sync-wait", clockSyncWait)
        add("capture-gather-ms", captureGatherMs)
        return entries
    }

    /// Reads the file (if any) and applies the flags. Errors name the file or flag, key and reason.
    public func load(environment: [String: String]) -> (DaemonConfiguration, [String]) {
        Self.load(config: config, flags: flagEntries, environment: environment)
    }

    /// The same load, again later: for SIGHUP, which reads the file again with the same flags on top.
    public var reloader: @Sendable ([String: String]) -> (DaemonConfiguration, [String]) {
        let config = self.config
        let flags = flagEntries
        return { Self.load(config: config, flags: flags, environment: $0) }
    }

    static func load(config: String?, flags: [ConfigFile.Entry], environment: [String: String]) -> (
        DaemonConfiguration, [String]
    ) {
        var file = ConfigFile(entries: [])
        var unreadable: String?
        let path = config ?? Self.defaultPath
        do {
            file = ConfigFile(text: String(decoding: try WholeFile.read(path: path, limit: 1 << 20), as: UTF8.self))
        } catch {
            // The default file may be absent; a file named on the command line must exist.
            if config != nil || error.errno != .noSuchFileOrDirectory { unreadable = "\(error)" }
        }
        let (configuration, errors) = DaemonConfiguration.load(
            file: file.entries, flags: flags, environment: environment)
        let all = (file.errors + errors).enumerated().sorted {
            ($0.element.line ?? .max, $0.offset) < ($1.element.line ?? .max, $1.offset)
        }
        let messages = all.map(\.element).map { error in
            switch error.line {
            case 0: "--\(error.key): \(error.reason)"
            case let line?: "\(path): line \(line): \(error.key): \(error.reason)"
            case nil: "\(error.key): \(error.reason)"
            }
        }
        return (configuration, (unreadable.map { [$0] } ?? []) + messages)
    }
}
