import Foundation
import NIOConcurrencyHelpers

/// A fixed window per key: at most `limit` requests in each minute. Answers how long to wait when over it, and
/// counts the refusal under its `name` for the metrics.
final class RateLimiter<Key: Hashable & Sendable>: Sendable {
    private struct Window {
        var start: ContinuousClock.Instant
        var count: Int
    }

    private let limit: Int
    private let windows = NIOLockedValueBox([Key: Window]())
    let name: String
    private let metrics: RegistryMetrics?

    init(perMinute limit: Int, name: String, metrics: RegistryMetrics? = nil) {
        self.limit = max(1, limit)
        self.name = name
        self.metrics = metrics
    }

    /// nil when the request may go ahead; otherwise the whole seconds until the window resets. A refusal is counted
    /// for the metrics unless `counting` is false (a look the caller makes again, as `StationRoutes.heldNotModified`'s is).
    func retryAfter(_ key: Key, now: ContinuousClock.Instant = .now, counting: Bool = true) -> Int? {
        let wait = windows.withLockedValue { windows -> Int? in
            if windows.count > 100_000 { windows = windows.filter { now - $0.value.start < .seconds(60) } }
            var window = windows[key] ?? Window(start: now, count: 0)
            if now - window.start >= .seconds(60) { window = Window(start: now, count: 0) }
            window.count += 1
            windows[key] = window
            guard window.count > limit else { return nil }
            let left = .seconds(60) - (now - window.start)
            return max(1, Int(left.components.seconds) + 1)
        }
        if wait != nil, counting { metrics?.refused(by: name) }
        return wait
    }
}

/// The names a credential's limits are counted under (`RateLimiter.name`).
enum CredentialLimit {
    static let stationRequests = "stationRequests"
    static let ownerRequests = "ownerRequests"
    static let ownerTests = "ownerTests"
    static let names = [stationRequests, ownerRequests, ownerTests]
}
