import BikeRegistryCore
import BikeRegistryStore
import DaemonSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOCore

/// The station side of docs/registry-api.yaml: `GET /bikes` and `POST /sightings`, with a station's key as
/// `?key=` or `Authorization: Bearer`.
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
    private func station(_ request: Request, query: FlatDictionary<Substring, Substring>) async throws -> Station {
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

    /// The list's ETag when memory alone answers a refresh 304: its key names a station held in memory, `missing` is
    /// well formed, and `If-None-Match` names the list's current version. The refresh is then counted against the
    /// station's rate (checked last, so that a refresh the route answers is counted once) and noted. nil when the
    /// route must go on: a 200 or 226, an error to explain, a key to look up in the database.
    func heldNotModified(query: FlatDictionary<Substring, Substring>, headers: HTTPFields) -> String? {
        guard let condition = headers[.ifNoneMatch], let list = snapshot.heldList(),
            Self.matches(condition, list.etag)
        else { return nil }
        if let missing = query["missing"], missing != "true" && missing != "false" { return nil }
        var found: Station?
        for key in Self.keys(query: query, authorization: headers[.authorization]) where found == nil {
            found = snapshot.heldStation(keyHash: Secrets.hash(key))
        }
        // A refusal is counted by the route, which looks again.
        guard let station = found, limiter.retryAfter(station.id, counting: false) == nil else { return nil }
        refreshes.note(station, userAgent: headers[.userAgent])
        return list.etag
    }

    /// The list's ETag at `version` and, for a list with rotating bikes, the moment its identities became the
    /// current ones (`RotatingListing.start`): the list changes when the windows move.
    static func etag(_ version: Int64, start: Int64? = nil) -> String {
        start.map { "\"m\(version)-\($0)\"" } ?? "\"m\(version)\""
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

    private func bikes(_ request: Request) async throws -> Response {
        let query = request.uri.queryParameters
        if let etag = heldNotModified(query: query, headers: request.headers) {
            return Response(status: .notModified, headers: [.eTag: etag])
        }
        let station = try await station(request, query: query)
        if let missing = query["missing"], missing != "true" && missing != "false" {
            throw APIError.badRequest("missing is true or false")
        }
        refreshes.note(station, userAgent: request.headers[.userAgent])
        // The list is only ever the missing bikes, whatever `missing` says: a station has no use for the others, and
        // a list of every beacon would let anyone with a key follow bikes that are not stolen.
        let list = try await snapshot.list()
        if let match = request.headers[.ifNoneMatch], Self.matches(match, list.etag) {
            return Response(status: .notModified, headers: [.eTag: list.etag])
        }
        // The changes since the list the station holds, for one that takes them (RFC 3229's A-IM), when this server
        // holds that list; the whole list otherwise.
        if Self.takesChanges(request.headers[Self.acceptInstanceManipulation]),
            let held = request.headers[.ifNoneMatch].flatMap(Self.single),
            let changes = await snapshot.history.changes(from: held, to: list)
        {
            let (headers, body) = Self.sent(
                Self.changesHeaders(list.etag), body: changes.body, gzipped: changes.gzipped,
                acceptEncoding: request.headers[.acceptEncoding])
            return Response(status: Self.imUsed, headers: headers, body: .init(byteBuffer: body))
        }
        let (headers, body) = Self.sent(
            Self.listHeaders(list.etag), body: list.body, gzipped: list.gzipped,
            acceptEncoding: request.headers[.acceptEncoding])
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: body))
    }

    /// The list's answer (or its changes'), gzipped for a station that takes it (each compressed once, beside its
    /// encoding): one ETag names both, since it names the list's version, whatever carries it.
    static func sent(
        _ headers: HTTPFields, body: ByteBuffer, gzipped: ByteBuffer, acceptEncoding: String?
    ) -> (HTTPFields, ByteBuffer) {
        guard GzipBody.accepted(acceptEncoding) else { return (headers, body) }
        var headers = headers
        headers[.contentEncoding] = "gzip"
        return (headers, gzipped)
    }

    private static func listHeaders(_ etag: String) -> HTTPFields {
        [
            .contentType: "application/json", .eTag: etag, .cacheControl: "no-cache",
            .vary: "Accept-Encoding, A-IM",
        ]
    }

    /// The changes' headers: the list's, and the instance manipulation done.
    static func changesHeaders(_ etag: String) -> HTTPFields {
        var headers = listHeaders(etag)
        headers[instanceManipulation] = changesManipulation
        return headers
    }

    static let imUsed = HTTPResponse.Status(code: 226, reasonPhrase: "IM Used")

    /// RFC 3229's request and answer headers, and the one instance manipulation the registry does: the list's
    /// changes (docs/registry-api.yaml, ListChanges).
    static let acceptInstanceManipulation = HTTPField.Name("A-IM")!
    static let instanceManipulation = HTTPField.Name("IM")!
    static let changesManipulation = "bike-changes"

    /// Whether `A-IM` names the list's changes (a comma-separated list; parameters after `;` ignored). On bytes, as
    /// `matches`: a station asks it with every refresh.
    static func takesChanges(_ header: String?) -> Bool {
        guard let header else { return false }
        for part in header.utf8.split(separator: UInt8(ascii: ",")) {
            let name = trimmed(part.prefix(while: { $0 != UInt8(ascii: ";") }))
            if name.count == changesManipulation.utf8.count,
                zip(name, changesManipulation.utf8).allSatisfy({ $0 | 0x20 == $1 })
            {
                return true
            }
        }
        return false
    }

    /// The one ETag an If-None-Match names, or nil for a list of several (the changes are from one list).
    static func single(_ header: String) -> String? {
        let etag = trimmed(header.utf8[...])
        guard etag.count >= 2, etag.first == UInt8(ascii: "\""), etag.last == UInt8(ascii: "\""),
            !etag.contains(UInt8(ascii: ","))
        else { return nil }
        return String(etag)
    }

    /// `bytes` without the spaces and tabs around them.
    private static func trimmed(_ bytes: Substring.UTF8View) -> Substring.UTF8View {
        let space = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        let start = bytes.firstIndex { !space($0) } ?? bytes.endIndex
        let end = bytes.lastIndex { !space($0) }.map { bytes.index(after: $0) } ?? start
        return bytes[start..<max(start, end)]
    }

    /// Whether an If-None-Match list (`"a", "b"`, spaces around each) names `etag`. On bytes, as `bearer`.
    static func matches(_ header: String, _ etag: String) -> Bool {
        let space = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        for part in header.utf8.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: true) {
            let trimmed = part.drop(while: space)
            guard let last = trimmed.lastIndex(where: { !space($0) }) else { continue }
            if trimmed[...last].elementsEqual(etag.utf8) { return true }
        }
        return false
    }

    /// A sighting's post, its outcome counted for the metrics (`RegistryMetrics.SightingOutcome`): a 4xx is refused;
    /// a failure of the store is counted by the store's own series.
    private func counted(_ request: Request) async throws -> Response {
        guard let metrics else { return try await sighting(request).response }
        do {
            let (response, outcome) = try await sighting(request)
            metrics.sighting(outcome)
            return response
        } catch let error as any HTTPResponseError where (400..<500).contains(error.status.code) {
            metrics.sighting(.refused)
            throw error
        }
    }

    private func sighting(_ request: Request) async throws -> (
        response: Response, outcome: RegistryMetrics.SightingOutcome
    ) {
        let station = try await station(request, query: request.uri.queryParameters)
        let body = try await JSONBody.decode(SightingBody.self, from: request)
        guard let key = request.headers[HTTPField.Name("Idempotency-Key")!] else {
            throw APIError.badRequest("Idempotency-Key is required")
        }
        guard key.lowercased() == body.report.sightingId else {
            throw APIError.badRequest("Idempotency-Key differs from sightingId")
        }
        var report = body.report
        let verification = try await verify(&report)
        let received = now()
        switch try await database.record(report, from: station, now: received) {
        case .repeated:
            return (Self.receipt(report.sightingId, "repeat", status: .ok), .duplicate)
        case .recorded(let notifications):
            if notifications > 0 { doorbell.ring() }
            if case .verified(let learned, let offset) = verification, learned != offset,
                try await database.learnClockOffset(bikeId: report.bikeId, offset: learned)
            {
                try await snapshot.listChanged()
            }
            let outcome: RegistryMetrics.SightingOutcome =
                if verification == .failed {
                    .unverifiedRotating
                } else if StationClockCheck.checked(report, receivedAt: received).timesAsReceived {
                    .clockNotBelieved
                } else {
                    .stored
                }
            return (Self.receipt(report.sightingId, "recorded", status: .created), outcome)
        }
    }

    /// Verifies a missing rotating bike's sighting: the identity heard at its date (the time it was received, if
    /// the station's clock is not believed) must be the bike's for an epoch within its window. Any other sighting of
    /// a rotating beacon's bike is stored unverified (`VisitNotifications.unverified`).
    private func verify(_ report: inout SightingReport) async throws -> RotatingListing.Verification {
        let listing = try await snapshot.rotatingListing()
        guard listing.beacons[report.bikeId] != nil else { return .notListed }
        let date = StationClockCheck.checked(report, receivedAt: now()).date
        let verification = listing.verify(
            bikeId: report.bikeId, major: report.heardMajor, minor: report.heardMinor,
            at: Int64(date.timeIntervalSince1970.rounded(.down)))
        if case .verified = verification { report.verifiedRotating = true }
        return verification
    }

    /// `{"result":…,"sightingId":…}` (docs/registry-api.yaml, SightingReceipt), written by hand: it is every post's answer.
    static func receipt(_ sightingId: String, _ result: String, status: HTTPResponse.Status) -> Response {
        var json = JSONWriter()
        json.raw("{")
        json.key("result", first: true)
        json.string(result)
        json.key("sightingId")
        json.string(sightingId)
        json.raw("}")
        return Response(
            status: status, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(string: json.text)))
    }
}

/// `POST /sightings`'s body (docs/registry-api.yaml, Sighting), checked field by field.
struct SightingBody: Decodable {
    var report: SightingReport

    static let fields: Set<String> = [
        "bikeId", "date", "latitude", "longitude", "sightingId", "kind", "stationId", "uuid", "major", "minor",
        "firstSeen", "lastSeen",
        "count", "rssi", "proximity", "clockSynchronized",
    ]
    static let proximities: Set<String> = ["immediate", "near", "far", "unknown"]

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: AnyKey.self)
        try container.refuseUnknown(Self.fields)
        func field<T: Decodable>(_ name: String, _ type: T.Type = T.self) throws -> T {
            try container.decode(T.self, forKey: AnyKey(stringValue: name))
        }
        let sightingId = try field("sightingId", String.self)
        guard UUID(uuidString: sightingId) != nil else { throw FieldError("sightingId is not a UUID") }
        let bikeId = try field("bikeId", String.self)
        guard (1...256).contains(bikeId.unicodeScalars.count) else { throw FieldError("bikeId is 1 to 256 characters") }
        try FieldError.refuseControlCharacters(bikeId, in: "bikeId")
        guard let kind = SightingReport.Kind(rawValue: try field("kind", String.self)) else {
            throw FieldError("kind is enter, update or exit")
        }
        let proximity = try field("proximity", String.self)
        guard Self.proximities.contains(proximity) else {
            throw FieldError("proximity is immediate, near, far or unknown")
        }
        // Required by the schema; the registry places a sighting at its station's recorded position, not the one sent.
        for number in ["latitude", "longitude"] { _ = try field(number, Double.self) }
        _ = try field("stationId", String.self)
        guard UUID(uuidString: try field("uuid", String.self)) != nil else { throw FieldError("uuid is not a UUID") }
        let heard = try ["major", "minor"].map { number in
            let value = try field(number, Int.self)
            guard (0...65535).contains(value) else { throw FieldError("\(number) is 0 to 65535") }
            return value
        }
        let count = try field("count", Int.self)
        guard (0...Int(Int32.max)).contains(count) else { throw FieldError("count is 0 to 2147483647") }
        let rssi = try container.decodeIfPresent(Double.self, forKey: AnyKey(stringValue: "rssi"))
        // Present means a boolean: null is not one.
        let synchronized = AnyKey(stringValue: "clockSynchronized")
        if container.contains(synchronized) { _ = try container.decode(Bool.self, forKey: synchronized) }
        report = SightingReport(
            sightingId: sightingId.lowercased(), bikeId: bikeId, kind: kind, date: try container.time("date"),
            firstSeen: try container.time("firstSeen"), lastSeen: try container.time("lastSeen"), proximity: proximity,
            rssi: rssi,
            count: count)
        report.heardMajor = heard[0]
        report.heardMinor = heard[1]
    }
}
