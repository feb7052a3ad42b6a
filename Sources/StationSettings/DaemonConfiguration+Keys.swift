import BeaconEngine
import BeaconWire

extension DaemonConfiguration {
    /// Every configuration key, in the order `--help` and the shipped example give them. A new key is one line here
    /// (and its property): the file, the flags, `--help`, `check-config` and SIGHUP's comparison all follow.
    public static let table: [ConfigKey] = [
        .value("station-id", "id", "Station id, named in every sighting and its id.", \.stationID, show: { $0 }) {
            guard !$0.isEmpty, $0.count <= 64,
                $0.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) })
            else { return .failure(.init("expected 1 to 64 letters, digits, '-', '_' or '.', got \"\($0)\"")) }
            return .success($0)
        },
        .decimal("latitude", -90...90, "degrees", "Station latitude, sent with each sighting.", \.latitude),
        .decimal("longitude", -180...180, "degrees", "Station longitude (negative west of Greenwich).", \.longitude),
        .list(
            "region", "uuid[:major]", "Beacon region (repeatable; the default is FindMyBike's).",
            \.regions, show: { $0.description }, parse: { BeaconRegion($0) }, expected: "UUID or UUID:MAJOR"),
        .value("backend", "name", "Capture backend: \(Backend.spelledOut).", \.backend, show: { $0.rawValue }) {
            guard let backend = Backend(rawValue: $0) else {
                return .failure(.init("expected \(Backend.spelledOut), got \"\($0)\""))
            }
            return .success(backend)
        },
        .list(
            "adapter", "hciN|address", "Adapter name or address (repeatable).", \.adapters, show: { $0 },
            parse: {
                ($0.hasPrefix("hci") && Int($0.dropFirst(3)) != nil) || BluetoothAddressText.isValid($0) ? $0 : nil
            },
            expected: "an adapter name (hci0) or address (00:1A:7D:DA:71:13)"),
        .decimal("scan-interval-ms", 2.5...10_240, "ms", "LE scan interval.", \.scanIntervalMilliseconds),
        .decimal(
            "scan-window-ms", 2.5...10_240, "ms", "LE scan window, at most the interval.", \.scanWindowMilliseconds),
        .integer(
            "stall-timeout", 2...86_400, "s",
            "Seconds without an advert (or without the station beacon, when set) before the scan is recovered: rescan, power-cycle, device reset, rfkill unblock.",
            \.stallTimeout),
        .value(
            "registry", "url", "Registry: https://… or file:///…/bikes.json (default file://STATE/bikes.json).",
            \.registry, show: { $0 ?? "" }
        ) {
            guard RegistryLocation($0, sightingsFile: "") != nil else {
                return .failure(.init("expected an http://, https:// or file:/// URL, got \"\($0)\""))
            }
            return .success($0)
        }.reloadableOnHangUp(),
        .value(
            "auth", "mode", "How the API key is sent: query (?key=) or bearer.", \.authentication, show: { $0.rawValue }
        ) {
            guard let mode = RegistryAuthentication(rawValue: $0) else {
                return .failure(.init("expected query or bearer, got \"\($0)\""))
            }
            return .success(mode)
        }.reloadableOnHangUp(),
        .value(
            "api-key-file", "path",
            "File holding the registry API key (or use the systemd credential registry-api-key).",
            \.apiKeyFile, show: { $0 ?? "" }, parse: { absolutePath($0).map(Optional.some) }
        ).reloadableOnHangUp(),
        .integer("refresh-interval", 10...86_400, "s", "Seconds between missing-set refreshes.", \.refreshInterval),
        .integer(
            "report-interval", 10...86_400, "s", "At most one update sighting per visit per this many seconds.",
            \.reportInterval),
        .integer("exit-timeout", 1...3_600, "s", "Seconds of silence after which a beacon has left.", \.exitTimeout),
        .value(
            "station-beacon", "uuid:major:minor", "The café's own beacon.", \.stationBeacon,
            show: { $0.map { "\($0)" } ?? "" }
        ) {
            guard let beacon = BeaconIdentity($0) else {
                return .failure(.init("expected UUID:MAJOR:MINOR, got \"\($0)\""))
            }
            return .success(beacon)
        },
        .integer(
            "station-silence", 10...86_400, "s",
            "Seconds the station beacon may be silent before capture is unhealthy.",
            \.stationSilence),
        .value(
            "state-directory", "path", "State directory: outbox, bike cache.", \.stateDirectory, show: { $0 },
            parse: absolutePath),
        .value("control-socket", "path", "Control socket.", \.controlSocket, show: { $0 }) {
            guard $0.hasPrefix("/"), $0.utf8.count < 108 else {
                return .failure(.init("expected an absolute path under 108 bytes (the limit of a Unix socket address)"))
            }
            return .success($0)
        },
        .integer("outbox-capacity", 100...10_000_000, "rows", "Most sightings the outbox holds.", \.outboxCapacity),
        .integer(
            "clock-sync-wait", 0...86_400, "s",
            "Seconds a sighting heard before the system clock is synchronised waits for it, then goes marked clockSynchronized: false.",
            \.clockSyncWait),
        .integer(
            "capture-gather-ms", 0...200, "ms",
            "Milliseconds adverts gather after the first wakes the capture thread, before all are read at once (0: each as it comes).",
            \.captureGatherMilliseconds),
        .value(
            "mqtt", "url",
            "MQTT broker sightings also go to: mqtt://host[:port] or mqtts://host[:port] (default: none).",
            \.mqtt, show: { $0?.description ?? "" }
        ) {
            guard let address = MQTTAddress($0) else {
                return .failure(.init("expected mqtt://host[:port] or mqtts://host[:port], got \"\($0)\""))
            }
            return .success(address)
        },
        .value(
            "mqtt-username", "name", "MQTT username.", \.mqttUsername, show: { $0 ?? "" },
            parse: { $0.isEmpty ? .failure(.init("expected a name")) : .success($0) }),
        .value(
            "mqtt-password-file", "path",
            "File holding the MQTT password (or use the systemd credential mqtt-password).", \.mqttPasswordFile,
            show: { $0 ?? "" }, parse: { absolutePath($0).map(Optional.some) }),
        .value(
            "mqtt-ca-file", "path", "Certificate authority an mqtts:// broker's certificate is checked against.",
            \.mqttCAFile, show: { $0 ?? "" }, parse: { absolutePath($0).map(Optional.some) }),
        .value(
            "mqtt-topic-prefix", "topic", "Topic prefix for the station's MQTT topics (default beacond/STATION-ID).",
            \.mqttTopicPrefix, show: { $0 ?? "" }
        ) {
            // MQTT 3.1.1 section 1.5.3: a topic should hold no control characters, and a broker may drop the client.
            guard !$0.isEmpty, !$0.hasSuffix("/"),
                !$0.unicodeScalars.contains(where: {
                    "+#".unicodeScalars.contains($0) || $0.value < 0x20 || (0x7F..<0xA0).contains($0.value)
                })
            else {
                return .failure(
                    .init("expected a topic without +, #, control characters or a trailing /, got \"\($0)\""))
            }
            return .success($0)
        },
        .value(
            "metrics-listen", "address[:port]",
            "Serve Prometheus metrics on http://ADDRESS:PORT/metrics, an IP address, port \(MetricsAddress.defaultPort) by default (default: off).",
            \.metricsListen, show: { $0?.description ?? "" }
        ) {
            guard let address = MetricsAddress($0) else {
                return .failure(
                    .init("expected an IP address and port such as 127.0.0.1:10042 or [::1]:10042, got \"\($0)\""))
            }
            return .success(address)
        },
    ]

    /// The keys the file and the flags know, for "unknown key" errors.
    public static var keys: [String] { table.map(\.name) }

    static let tableByName = Dictionary(uniqueKeysWithValues: table.map { ($0.name, $0) })

    /// The key of this name (for another command that takes some of the daemon's keys, as `replay` does the engine's,
    /// with the same help and bounds); nil for a name not in the table.
    public static func key(_ name: String) -> ConfigKey? { tableByName[name] }

    private static func absolutePath(_ text: String) -> Result<String, ConfigKey.Refusal> {
        text.hasPrefix("/") ? .success(text) : .failure(.init("expected an absolute path, got \"\(text)\""))
    }

    /// Every key with its value as text: what SIGHUP compares to tell which keys changed.
    public var settings: [String: String] {
        Dictionary(uniqueKeysWithValues: Self.table.map { ($0.name, $0.show(self)) })
    }
}
