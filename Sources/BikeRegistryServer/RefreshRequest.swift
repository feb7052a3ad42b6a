import HTTPTypes
import HummingbirdCore

/// What a station's refresh (`GET /bikes`) is answered on, from the router's request or from the head
/// `RefreshFastPath` read itself.
struct RefreshRequest {
    var query: FlatDictionary<Substring, Substring>
    var authorization: String?
    var ifNoneMatch: String?
    var userAgent: String?
    var acceptEncoding: String?
    /// `A-IM` (RFC 3229).
    var instanceManipulation: String?
}

extension RefreshRequest {
    init(query: FlatDictionary<Substring, Substring>, headers: HTTPFields) {
        self.init(
            query: query, authorization: headers[.authorization], ifNoneMatch: headers[.ifNoneMatch],
            userAgent: headers[.userAgent], acceptEncoding: headers[.acceptEncoding],
            instanceManipulation: headers[StationRoutes.acceptInstanceManipulation])
    }

    init(query: FlatDictionary<Substring, Substring>, head: PlainGetHead) {
        self.init(
            query: query, authorization: head.authorization, ifNoneMatch: head.ifNoneMatch, userAgent: head.userAgent,
            acceptEncoding: head.acceptEncoding, instanceManipulation: head.instanceManipulation)
    }
}
