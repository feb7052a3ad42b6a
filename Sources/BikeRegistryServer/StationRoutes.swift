import BikeRegistryCore
import BikeRegistryStore
import DaemonSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOCore

/// The station side of docs/registry-api.yaml: `GET /bikes` and `POST /sightings`, with a station's key as
/// `?key=` or `Authorization: Bearer`. Here the routes and the key that names the station; the list's answers are in
/// `StationRoutes+List`, the sightings' in `StationRoutes+Sightings` (their body, `SightingBody`).
final class StationRoutes: Sendable {
    let database: any RegistryStore
    /// By station.
    let limiter: RateLimiter<Int64>
    let doorbell: Doorbell
    let refreshes: StationRefreshLog
    let snapshot: RegistrySnapshot
    /// Told what became of each sighting posted.
    let metrics: RegistryMetrics?
    let now: @Sendable () -> Date

    init(
        database: any RegistryStore, limiter: RateLimiter<Int64>, doorbell: Doorbell, refreshes: StationRefreshLog,
        snapshot: RegistrySnapshot, metrics: RegistryMetrics? = nil, now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.metrics = metrics
        self.now = now
        self.database = database
        self.limiter = limiter
        self.doorbell = doorbell
        self.refreshes = refreshes
        self.snapshot = snapshot
    }

    var routes: [Route] {
        [
            .get("bikes") { request, _ in try await self.bikes(request) },
            .post("sightings") { request, _ in try await self.counted(request) },
        ]
    }

    /// The station the request's key names; 401 for none, an unknown or a revoked key; 429 past the key's rate.
    func station(_ request: Request, query: FlatDictionary<Substring, Substring>) async throws -> Station {
        let keys = Self.keys(query: query, authorization: request.headers[.authorization])
        guard !keys.isEmpty else {
            throw APIError.unauthorized("a station key is required, as ?key= or Authorization: Bearer")
        }
        var found: Station?
        for key in keys where found == nil { found = try await snapshot.station(keyHash: Secrets.hash(key)) }
        guard let station = found else { throw APIError.unauthorized("unknown or revoked station key") }
        if let wait = limiter.retryAfter(station.id) { throw APIError.tooManyRequests(retryAfter: wait) }
        return station
    }

    /// The keys a request sends: either way of sending one is accepted, and a request that sends both is let in by
    /// either.
    static func keys(query: FlatDictionary<Substring, Substring>, authorization: String?) -> [String] {
        var keys: [String] = []
        if let key = query["key"], !key.isEmpty { keys.append(String(key)) }
        if let key = authorization.flatMap(Self.bearer), !key.isEmpty { keys.append(key) }
        return keys
    }

    /// The token of `Bearer TOKEN` (the scheme in any case, as RFC 9110 has it; spaces around the token dropped).
    /// On bytes: it is read on every request, and Foundation's split, lowercasing and trimming cost more than the key's hash.
    static func bearer(_ header: String) -> String? {
        let bytes = header.utf8
        let scheme = "bearer".utf8
        guard bytes.count > scheme.count, zip(bytes, scheme).allSatisfy({ $0 | 0x20 == $1 }) else { return nil }
        let rest = bytes.dropFirst(scheme.count)
        guard rest.first == UInt8(ascii: " ") else { return nil }
        let token = rest.drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
        let end = token.lastIndex { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }
        return end.map { String(decoding: token[...$0], as: UTF8.self) } ?? ""
    }
}
