public import BeaconEngine
public import BeaconOutbox
public import BeaconWire

/// What `GET /bikes` gave.
public enum RegistryFetch: Sendable {
    /// 304: the set we have is current.
    case notModified
    /// A new list, read as it arrived straight into the set matching needs (`BikeListReader`, `MissingBikeSet.Builder`).
    case list(MissingBikeSet, validators: CacheValidators)
}

/// What makes the next `GET /bikes` conditional.
public struct CacheValidators: Hashable, Sendable, Codable {
    public var etag: String?
    public var lastModified: String?

    public init(etag: String? = nil, lastModified: String? = nil) {
        self.etag = etag
        self.lastModified = lastModified
    }
}

/// How one delivery attempt ended.
public enum PostOutcome: Hashable, Sendable {
    /// Any 2xx: the row can go.
    case delivered
    /// Timeouts, connection errors, 5xx, 408, 429: try again later, not before `retryAfter` if the server said.
    case retry(reason: String, retryAfter: Duration?)
    /// The registry will never take this one (400, 413, 422…): it goes to the dead letters.
    case rejected(status: Int, reason: String)
    /// The station's problem, not the sighting's (a refused key, a redirect, a wrong URL): every sighting is kept,
    /// the daemon says what to change, and tries again slowly or as soon as the configuration changes.
    case held(status: Int, reason: String)
}

/// A registry request that failed, worded for a log line or `status`. Never contains the API key.
public struct RegistryError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Code: Hashable, Sendable {
        /// Could not connect, reset, timed out.
        case transport
        /// An HTTP status we cannot use.
        case status(Int)
        /// The answer was not a JSON array of bikes, or was too large.
        case badAnswer
        /// The embedded registry's file could not be read.
        case file
        /// A state file (the bike cache) holds something beacond did not write: truncated, or not JSON.
        case damaged
    }
    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}

/// Where the missing bikes come from, as the refresher sees it.
public protocol MissingBikeSource: Sendable {
    /// Where it is, for logs and status, with any key redacted.
    var displayName: String { get }
    func fetchMissing(validators: CacheValidators?, regions: [BeaconRegion]) async throws(RegistryError)
        -> RegistryFetch
}

/// Where sightings go (the registry, an MQTT broker), as a poster sees it: one attempt to deliver one sighting.
public protocol SightingSink: Sendable {
    /// Where it is, for logs and status, with any key redacted.
    var displayName: String { get }
    /// The name of its line in the outbox ("registry", "mqtt"): the same across restarts, or what it was owed is
    /// dropped as a sink no longer configured.
    var sinkName: String { get }
    func post(body: String, sightingID: String) async -> PostOutcome
}

extension SightingSink {
    /// Every registry is the outbox's "registry" line, HTTP or file, whichever one the configuration names.
    public var sinkName: String { Outbox.registry }
}

/// The registry, both of them at once; HTTP and file implementations.
public typealias Registry = MissingBikeSource & SightingSink
