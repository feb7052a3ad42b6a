/// Where the registry is, as the `registry` key names it.
public enum RegistryLocation: Sendable, Equatable {
    /// The REST API at this base URL (`http://` or `https://`), e.g. `https://registry.example/api`.
    case http(base: String)
    /// The embedded registry: the missing set from a local JSON file, sightings appended to a JSON-lines file.
    case file(bikes: String, sightings: String)

    /// Parses `http(s)://…` or `file:///…/bikes.json`; for a file registry, sightings go to `sightingsFile`.
    public init?(_ text: String, sightingsFile: String) {
        if text.hasPrefix("http://") || text.hasPrefix("https://") {
            var base = text
            while base.hasSuffix("/") { base.removeLast() }
            self = .http(base: base)
        } else if text.hasPrefix("file://"), text.dropFirst("file://".count).hasPrefix("/") {
            self = .file(bikes: String(text.dropFirst("file://".count)), sightings: sightingsFile)
        } else {
            return nil
        }
    }
}

/// How the API key travels: as the `key` query parameter (what the FindMyBike registry checks) or as
/// `Authorization: Bearer`.
public enum RegistryAuthentication: String, Sendable, CaseIterable {
    case query, bearer
}
