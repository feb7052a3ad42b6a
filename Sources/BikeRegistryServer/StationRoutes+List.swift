import BikeRegistryCore
import BikeRegistryStore
import DaemonSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOCore

/// A station's refresh (`GET /bikes`): a 304 from memory where it can be, else the list whole or its changes since
/// the list the station holds (RFC 3229), gzipped for a station that takes it; and the conditions read from its headers.
extension StationRoutes {
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

    func bikes(_ request: Request) async throws -> Response {
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
}
