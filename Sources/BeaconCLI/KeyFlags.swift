public import ArgumentParser
import StationSettings
import TextFormats

/// One flag per configuration key, declared for ArgumentParser (the property's name is the key's, as ArgumentParser
/// spells it: `stationId`, `--station-id`) with its value and help from the key's line in `DaemonConfiguration.table`, so `--help` and the man page list them, and ArgumentParser reads them (a value
/// may start with a dash: `--longitude -0.12`). `entries` hands them on as the table's entries; a test holds the
/// declarations to the table, both ways.
public struct KeyFlags: ParsableArguments {
    @Option(parsing: .unconditional, help: Self.help("station-id")) var stationId: String?
    @Option(parsing: .unconditional, help: Self.help("latitude")) var latitude: String?
    @Option(parsing: .unconditional, help: Self.help("longitude")) var longitude: String?
    @Option(parsing: .unconditionalSingleValue, help: Self.help("region"))
    var region: [String] = []
    @Option(parsing: .unconditional, help: Self.help("backend")) var backend: String?
    @Option(parsing: .unconditionalSingleValue, help: Self.help("adapter"))
    var adapter: [String] = []
    @Option(parsing: .unconditional, help: Self.help("scan-interval-ms"))
    var scanIntervalMs: String?
    @Option(parsing: .unconditional, help: Self.help("scan-window-ms"))
    var scanWindowMs: String?
    @Option(parsing: .unconditional, help: Self.help("stall-timeout"))
    var stallTimeout: String?
    @Option(parsing: .unconditional, help: Self.help("registry")) var registry: String?
    @Option(parsing: .unconditional, help: Self.help("auth")) var auth: String?
    @Option(parsing: .unconditional, help: Self.help("api-key-file")) var apiKeyFile: String?
    @Option(parsing: .unconditional, help: Self.help("refresh-interval"))
    var refreshInterval: String?
    @Option(parsing: .unconditional, help: Self.help("report-interval"))
    var reportInterval: String?
    @Option(parsing: .unconditional, help: Self.help("exit-timeout"))
    var exitTimeout: String?
    @Option(parsing: .unconditional, help: Self.help("station-beacon"))
    var stationBeacon: String?
    @Option(parsing: .unconditional, help: Self.help("station-silence"))
    var stationSilence: String?
    @Option(
        name: [.customLong("state-directory"), .customLong("state-dir")], parsing: .unconditional,
        help: Self.help("state-directory")) var stateDirectory: String?
    @Option(parsing: .unconditional, help: Self.help("control-socket"))
    var controlSocket: String?
    @Option(parsing: .unconditional, help: Self.help("outbox-capacity"))
    var outboxCapacity: String?
    @Option(parsing: .unconditional, help: Self.help("clock-sync-wait"))
    var clockSyncWait: String?
    @Option(parsing: .unconditional, help: Self.help("capture-gather-ms"))
    var captureGatherMs: String?
    @Option(parsing: .unconditional, help: Self.help("mqtt")) var mqtt: String?
    @Option(parsing: .unconditional, help: Self.help("mqtt-username"))
    var mqttUsername: String?
    @Option(parsing: .unconditional, help: Self.help("mqtt-password-file"))
    var mqttPasswordFile: String?
    @Option(parsing: .unconditional, help: Self.help("mqtt-ca-file")) var mqttCaFile: String?
    @Option(parsing: .unconditional, help: Self.help("mqtt-topic-prefix"))
    var mqttTopicPrefix: String?
    @Option(parsing: .unconditional, help: Self.help("metrics-listen"))
    var metricsListen: String?

    public init() {}

    /// The flags given, as the table's entries (line 0: a flag).
    var entries: [ConfigFile.Entry] {
        let single: [(String, String?)] = [
            ("station-id", stationId), ("latitude", latitude), ("longitude", longitude), ("backend", backend),
            ("scan-interval-ms", scanIntervalMs), ("scan-window-ms", scanWindowMs), ("stall-timeout", stallTimeout),
            ("registry", registry), ("auth", auth), ("api-key-file", apiKeyFile),
            ("refresh-interval", refreshInterval), ("report-interval", reportInterval), ("exit-timeout", exitTimeout),
            ("station-beacon", stationBeacon), ("station-silence", stationSilence),
            ("state-directory", stateDirectory), ("control-socket", controlSocket),
            ("outbox-capacity", outboxCapacity), ("clock-sync-wait", clockSyncWait),
            ("capture-gather-ms", captureGatherMs), ("mqtt", mqtt), ("mqtt-username", mqttUsername),
            ("mqtt-password-file", mqttPasswordFile), ("mqtt-ca-file", mqttCaFile),
            ("mqtt-topic-prefix", mqttTopicPrefix), ("metrics-listen", metricsListen),
        ]
        let given =
            single.compactMap { key, value in value.map { (key, [$0]) } }
            + [("region", region), ("adapter", adapter)]
        return given.flatMap { key, values in values.map { ConfigFile.Entry(key: key, value: $0, line: 0) } }
    }

    /// Each key's default as `settings` prints it, made once for all the flags' help.
    private static let defaults = DaemonConfiguration().settings

    /// The key's help as the table gives it, with its value's shape and its default.
    static func help(_ name: String) -> ArgumentHelp {
        guard let key = DaemonConfiguration.key(name) else { preconditionFailure("no key \(name) in the table") }
        let given = defaults[name].flatMap { $0.isEmpty ? nil : " (default: \($0))" } ?? ""
        return ArgumentHelp(key.help + given, valueName: key.valueName)
    }
}
