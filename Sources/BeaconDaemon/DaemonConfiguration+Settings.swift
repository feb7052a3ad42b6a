import BeaconCapture
import BeaconEngine
import BeaconRegistryClient
import BeaconWire

#if canImport(Glibc)
import Glibc
#endif

extension DaemonConfiguration {
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

extension DaemonConfiguration {
    /// The file the MQTT password is read from: `mqtt-password-file`, else the systemd credential `mqtt-password`
    /// when the service has one; nil: no password (a broker without them).
    public func mqttPasswordPath(environment: [String: String]) -> String? {
        if let mqttPasswordFile { return mqttPasswordFile }
        guard let directory = environment["CREDENTIALS_DIRECTORY"], !directory.isEmpty,
            access(directory + "/mqtt-password", F_OK) == 0
        else { return nil }
        return directory + "/mqtt-password"
    }
}
