public import BeaconDelivery
public import BeaconEngine
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

/// The registry, both of them at once; HTTP and file implementations.
public typealias Registry = MissingBikeSource & SightingSink
