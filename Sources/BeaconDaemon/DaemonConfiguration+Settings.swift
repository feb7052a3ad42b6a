import BeaconCapture
import BeaconEngine
import BeaconRegistryClient
import BeaconWire

extension DaemonConfiguration {
    /// Every key with its value as text: what SIGHUP compares to tell which keys changed.
    public var settings: [String: String] {
        [
            "station-id": stationID, "latitude": "\(latitude)", "longitude": "\(longitude)",
            "region": regions.map(\.description).joined(separator: ","), "backend": backend.rawValue,
            "adapter": adapters.joined(separator: ","), "scan-interval-ms": "\(scanIntervalMilliseconds)",
            "scan-window-ms": "\(scanWindowMilliseconds)", "stall-timeout": "\(stallTimeout)",
            "registry": registry ?? "", "auth": authentication.rawValue,
            "api-key-file": apiKeyFile ?? "", "refresh-interval": "\(refreshInterval)",
            "report-interval": "\(reportInterval)",
            "exit-timeout": "\(exitTimeout)", "station-beacon": stationBeacon.map { "\($0)" } ?? "",
            "station-silence": "\(stationSilence)", "state-directory": stateDirectory, "control-socket": controlSocket,
            "outbox-capacity": "\(outboxCapacity)", "clock-sync-wait": "\(clockSyncWait)",
            "capture-gather-ms": "\(captureGatherMilliseconds)",
        ]
    }

    /// The keys a SIGHUP applies at once: where the registry is and how beacond signs in to it. The API key
    /// file is read again on every SIGHUP, so a rotated key needs no restart.
    public static let reloadableKeys: Set<String> = ["registry", "auth", "api-key-file"]

    /// Keys whose value differs, sorted.
    public func changedKeys(from other: DaemonConfiguration) -> [String] {
        let mine = settings
        let theirs = other.settings
        return mine.keys.filter { mine[$0] != theirs[$0] }.sorted()
    }
}
