public import BeaconRegistryClient
public import Logging
public import StationSettings

#if canImport(Glibc)
import Glibc
#endif

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
