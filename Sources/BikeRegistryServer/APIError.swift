import BikeRegistryCore
import BikeRegistryStore
import Foundation
import HTTPTypes
import Hummingbird

/// The registry's 4xx answers: a status and a reason, as `{"error":{"message":…}}` (Hummingbird's shape).
enum APIError {
    static func badRequest(_ reason: String) -> HTTPError { HTTPError(.badRequest, message: reason) }
    static func unauthorized(_ reason: String) -> HTTPError {
        HTTPError(.unauthorized, headers: [.wwwAuthenticate: "Bearer"], message: reason)
    }
    static let notFound = HTTPError(.notFound, message: "no such bike for this token")
    /// A report past the three a bike may have made in any 30 days.
    static func tooManyReports(next: Date, now: Date) -> HTTPError {
        let seconds = max(1, Int(next.timeIntervalSince(now).rounded(.up)))
        return HTTPError(
            .tooManyRequests, headers: [.retryAfter: String(seconds)],
            message:
                "a bike may be reported missing at most 3 times in 30 days; the next report may be made from \(ISOTime.readable(next))"
        )
    }

    static func tooManyRequests(retryAfter seconds: Int) -> HTTPError {
        HTTPError(
            .tooManyRequests, headers: [.retryAfter: String(seconds)],
            message: "too many requests; try again in \(seconds) s")
    }
}
