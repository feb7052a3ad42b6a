import AsyncHTTPClient
import BeaconDaemon
import BeaconEngine
import BeaconRegistryClient
import StationSettings

/// The registry's link: reachable, and accepting this station's key, by the request the daemon makes every few
/// minutes (a conditional `GET /bikes`, so a registry with nothing new answers 304 and sends nothing).
extension Doctor {
    func checkRegistry() async -> DoctorCheck {
        let name = "registry"
        guard case .http(let base) = configuration.registryLocation else {
            return .ok(
                name,
                "the embedded registry (\(configuration.stateDirectory)/bikes.json); nothing goes over the network")
        }
        let shown = RegistryAddress.redacted(base)
        let key: APIKey
        let keySource: String
        do throws(RegistryError) {
            guard let (found, source) = try apiKey() else {
                return .fail(
                    name, "\(shown) needs an API key, and none is configured",
                    fix: "put the key in /etc/beacond/registry-api-key (or set api-key-file in \(configurationPath))")
            }
            (key, keySource) = (found, source)
        } catch {
            return .fail(name, error.message, fix: "put the station's key in that file (one line), readable by root")
        }
        let answered: String
        var unmatchable = 0
        switch await askRegistry(base: base, key: key) {
        case .success(.notModified):
            answered = "answered 304 (the cached list is current)"
        case .success(.list(let list, _, _)):
            answered = "answered with \(list.count) missing bikes"
            unmatchable = list.statistics.rotatingOutsideRegions
        case .success(.changes):  // not asked for here (no recording), but an answer all the same
            answered = "answered with the changes since the list held"
        case .failure(let error):
            switch error.code {
            case .status(401), .status(403):
                return .fail(
                    name, "\(shown) refused the API key from \(keySource) (\(error.code.statusText))",
                    fix: "put this station's key in \(keySource), then sudo systemctl restart beacond")
            case .status:
                return .fail(
                    name, "\(shown) answered \(error.code.statusText)",
                    fix: "check the registry URL (registry = … in \(configurationPath))")
            case .transport:
                return .fail(
                    name, "cannot reach \(shown): \(error.message.afterColon)",
                    fix: "check the network and the registry URL in \(configurationPath)")
            case .badAnswer, .file, .damaged:
                return .fail(
                    name, "\(shown): \(error.message.afterColon)", fix: "check the registry URL in \(configurationPath)"
                )
            }
        }
        let detail = "\(shown) \(answered); key from \(keySource) accepted"
        return verdict(name, detail: detail, base: base, unmatchable: unmatchable)
    }

    /// An answered registry's line: a warning for a key sent in clear, or for rotating beacons no region admits.
    private func verdict(_ name: String, detail: String, base: String, unmatchable: Int) -> DoctorCheck {
        if unmatchable > 0 {
            return .warn(
                name,
                "\(detail), but \(unmatchable) of them have rotating beacons, which use every major, and no configured "
                    + "region admits their identities",
                fix: "configure the region by its UUID alone (region = UUID in \(configurationPath)): fixed beacons "
                    + "match as before")
        }
        if RegistryAddress.sendsKeyInClear(base) {
            return .warn(
                name, "\(detail), but over plain http, so the key crosses the network readable",
                fix: "use an https:// registry URL")
        }
        return .ok(name, detail)
    }

    /// The daemon's own request, once: a conditional `GET /bikes` with the cached list's validators.
    private func askRegistry(base: String, key: APIKey) async -> Result<RegistryFetch, RegistryError> {
        var registryConfiguration = RegistryConfiguration(
            location: .http(base: base), authentication: configuration.authentication, apiKey: key,
            stationID: configuration.stationID,
            connectTimeout: .seconds(5), requestTimeout: .seconds(10))
        registryConfiguration.maximumResponseBytes = 16 * 1024 * 1024
        let client = HTTPRegistry.makeHTTPClient(registryConfiguration)
        let registry = HTTPRegistry(configuration: registryConfiguration, client: client)
        let validators =
            (try? BikeCache(path: configuration.stateDirectory + "/missing-bikes.json").load(
                regions: configuration.regions))??.validators
        let outcome: Result<RegistryFetch, RegistryError>
        do throws(RegistryError) {
            outcome = .success(try await registry.fetchMissing(validators: validators, regions: configuration.regions))
        } catch {
            outcome = .failure(error)
        }
        try? await client.shutdown()
        return outcome
    }

    /// The key the daemon would use: `api-key-file`, else the systemd credential (from the service's environment
    /// when doctor runs inside it, else from the file the unit's `LoadCredential=` names). nil when there is none.
    func apiKey() throws(RegistryError) -> (APIKey, source: String)? {
        if let path = configuration.apiKeyFile { return (try APIKey.load(path: path), path) }
        if let key = try APIKey.fromCredentials(name: "registry-api-key", environment: environment) {
            return (key, "the credential registry-api-key")
        }
        if let source = unit?.credentials["registry-api-key"], source.hasPrefix("/") {
            return (try APIKey.load(path: source), source)
        }
        return nil
    }
}

extension RegistryError.Code {
    var statusText: String {
        if case .status(let code) = self { return "HTTP \(code)" }
        return "\(self)"
    }
}

extension String {
    /// "GET https://…/bikes?key=REDACTED: connection refused" → "connection refused".
    var afterColon: String {
        guard let range = firstRange(of: ": ") else { return self }
        return String(self[range.upperBound...])
    }
}
