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
        let given: [(String, [String])] = [
            ("station-id", stationId.map { [$0] } ?? []), ("latitude", latitude.map { [$0] } ?? []),
            ("longitude", longitude.map { [$0] } ?? []), ("region", region), ("backend", backend.map { [$0] } ?? []),
            ("adapter", adapter), ("scan-interval-ms", scanIntervalMs.map { [$0] } ?? []),
            ("scan-window-ms", scanWindowMs.map { [$0] } ?? []), ("stall-timeout", stallTimeout.map { [$0] } ?? []),
            ("registry", registry.map { [$0] } ?? []), ("auth", auth.map { [$0] } ?? []),
            ("api-key-file", apiKeyFile.map { [$0] } ?? []), ("refresh-interval", refreshInterval.map { [$0] } ?? []),
            ("report-interval", reportInterval.map { [$0] } ?? []), ("exit-timeout", exitTimeout.map { [$0] } ?? []),
            ("station-beacon", stationBeacon.map { [$0] } ?? []),
            ("station-silence", stationSilence.map { [$0] } ?? []),
            ("state-directory", stateDirectory.map { [$0] } ?? []),
            ("control-socket", controlSocket.map { [$0] } ?? []),
            ("outbox-capacity", outboxCapacity.map { [$0] } ?? []),
            ("clock-sync-wait", clockSyncWait.map { [$0] } ?? []),
            ("capture-gather-ms", captureGatherMs.map { [$0] } ?? []), ("mqtt", mqtt.map { [$0] } ?? []),
            ("mqtt-username", mqttUsername.map { [$0] } ?? []),
            ("mqtt-password-file", mqttPasswordFile.map { [$0] } ?? []),
            ("mqtt-ca-file", mqttCaFile.map { [$0] } ?? []), ("mqtt-topic-prefix", mqttTopicPrefix.map { [$0] } ?? []),
            ("metrics-listen", metricsListen.map { [$0] } ?? []),
        ]
        return given.flatMap { key, values in values.map { ConfigFile.Entry(key: key, value: $0, line: 0) } }
    }

    /// The key's help as the table gives it, with its value's shape and its default.
    static func help(_ name: String) -> ArgumentHelp {
        guard let key = DaemonConfiguration.key(name) else { preconditionFailure("no key \(name) in the table") }
        let given = DaemonConfiguration().settings[name].flatMap { $0.isEmpty ? nil : " (default: \($0))" } ?? ""
        return ArgumentHelp(key.help + given, valueName: key.valueName)
    }
}
