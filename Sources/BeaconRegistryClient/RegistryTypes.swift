public import BeaconDelivery
public import BeaconEngine
public import BeaconWire
import BikeListJSON
public import ListChanges

/// What `GET /bikes` gave.
public enum RegistryFetch: Sendable {
    /// 304: the set we have is current.
    case notModified
    /// A new list, read as it arrived straight into the set matching needs (`BikeListReader`, `MissingBikeSet.Builder`)
    /// and, when the fetch was given a `ListRecording`, into the cache's next version (`recorded`, finished, for the
    /// refresher to commit or abandon).
    case list(MissingBikeSet, validators: CacheValidators, recorded: ListFile?)
    /// 226 (RFC 3229): what changed since the list the station holds, which it asked for
    /// (`ListRecording.changesSince`): applied to the cache (`BikeCache.applying`).
    case changes(ListChanges, validators: CacheValidators)
}

/// What a fetch does beside reading the set: write the list whole into the cache's next version as it comes, and
/// ask for only the changes since the list the cache holds.
public struct ListRecording: Sendable {
    public var cache: BikeCache
    /// The ETag of the list the cache holds whole (a version 2 cache from this registry), to be sent only what changed
    /// since; nil asks for the whole list.
    public var changesSince: String?
    public var fetchedAt: Int64
    /// Where the list comes from, as the cache names it (key redacted).
    public var source: String

    public init(cache: BikeCache, changesSince: String?, fetchedAt: Int64, source: String) {
        self.cache = cache
        self.changesSince = changesSince
        self.fetchedAt = fetchedAt
        self.source = source
    }
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
    /// - Parameter recording: where the list is written as it comes, and the list held to be sent changes to; nil
    ///   for neither (a source may ignore it, and answer a whole list it does not record).
    func fetchMissing(validators: CacheValidators?, regions: [BeaconRegion], recording: ListRecording?)
        async throws(RegistryError) -> RegistryFetch
}

extension MissingBikeSource {
    /// The list, or 304, recording nothing: for a look at the registry (`doctor`, the tests).
    public func fetchMissing(validators: CacheValidators?, regions: [BeaconRegion]) async throws(RegistryError)
        -> RegistryFetch
    {
        try await fetchMissing(validators: validators, regions: regions, recording: nil)
    }
}

/// The registry, both of them at once; HTTP and file implementations.
public typealias Registry = MissingBikeSource & SightingSink
