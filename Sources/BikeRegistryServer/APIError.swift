import HTTPTypes
import Hummingbird

/// The registry's 4xx answers: a status and a reason, as `{"error":{"message":…}}` (Hummingbird's shape).
enum APIError {
    static func badRequest(_ reason: String) -> HTTPError { HTTPError(.badRequest, message: reason) }
    static func unauthorized(_ reason: String) -> HTTPError {
        HTTPError(.unauthorized, headers: [.wwwAuthenticate: "Bearer"], message: reason)
    }
    static let notFound = HTTPError(.notFound, message: "no such bike for this token")
    static func tooManyRequests(retryAfter seconds: Int) -> HTTPError {
        HTTPError(
            .tooManyRequests, headers: [.retryAfter: String(seconds)],
            message: "too many requests; try again in \(seconds) s")
    }
}
