import Foundation
import Synchronization

/// A fixed window per key: at most `limit` requests in each minute. Answers how long to wait when over it.
final class RateLimiter<Key: Hashable & Sendable>: Sendable {
    private struct Window {
        var start: ContinuousClock.Instant
        var count: Int
    }

    private let limit: Int
    private let windows = Mutex([Key: Window]())

    init(perMinute limit: Int) { self.limit = max(1, limit) }

    /// nil when the request may go ahead; otherwise the whole seconds until the window resets.
    func retryAfter(_ key: Key, now: ContinuousClock.Instant = .now) -> Int? {
        windows.withLock { windows in
            if windows.count > 100_000 { windows = windows.filter { now - $0.value.start < .seconds(60) } }
            var window = windows[key] ?? Window(start: now, count: 0)
            if now - window.start >= .seconds(60) { window = Window(start: now, count: 0) }
            window.count += 1
            windows[key] = window
            guard window.count > limit else { return nil }
            let left = .seconds(60) - (now - window.start)
            return max(1, Int(left.components.seconds) + 1)
        }
    }
}
