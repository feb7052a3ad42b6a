package import Foundation

/// When a failed delivery is tried again, or that it is given up: backoff from `base` doubling to an hour, at least
/// the endpoint's `Retry-After` (up to an hour), and abandonment once the message is three days old. Pure: the
/// worker asks with the registry's clock, the tests with a manual one.
package struct RetrySchedule: Sendable {
    package enum Decision: Equatable {
        case retry(at: Date)
        case abandon
    }

    package static let giveUpAfter: TimeInterval = 3 * 86_400
    package static let longest: TimeInterval = 3_600

    /// The first retry's wait, in seconds.
    package let base: Double

    package init(base: Double) { self.base = base }

    package func decide(attempts: Int, createdAt: Date, retryAfter: TimeInterval?, now: Date) -> Decision {
        if now.timeIntervalSince(createdAt) > Self.giveUpAfter { return .abandon }
        let backoff = min(Self.longest, base * pow(2, Double(min(attempts, 12))))
        let wait = max(backoff, min(Self.longest, retryAfter ?? 0))
        return .retry(at: now.addingTimeInterval(wait))
    }
}
