import Foundation
import Synchronization

/// Counts of something a network does that must stay rare, per network (an IPv4 address, an IPv6 /64): a network
/// that reaches `limit` in a day is refused until that day is over. A day starts at its first count. Used for wrong
/// claim codes (60-bit codes cannot be guessed at 10 a day, and this keeps anyone from trying at the rate the
/// per-minute limit allows) and finders' reports. Counted per server, in memory: a restart forgives. Only the
/// network's key is held, for at most a day, and never written anywhere.
final class DailyCounts: Sendable {
    private struct Day {
        var start: Date
        var count: Int
    }

    let limit: Int
    let day: TimeInterval
    /// Networks remembered at most; past it the days that are over are forgotten, then the oldest.
    let capacity: Int
    private let days = Mutex([String: Day]())

    init(limit: Int, day: TimeInterval = 86_400, capacity: Int = 200_000) {
        self.limit = limit
        self.day = day
        self.capacity = capacity
    }

    /// nil when `network` may register at `now`; otherwise the whole seconds until its day is over.
    func retryAfter(_ network: String, now: Date) -> Int? {
        days.withLock { days in
            guard let current = days[network], now.timeIntervalSince(current.start) < day,
                current.count >= limit
            else { return nil }
            return max(1, Int((day - now.timeIntervalSince(current.start)).rounded(.up)))
        }
    }

    /// Counts one from `network`.
    func note(_ network: String, now: Date) {
        days.withLock { days in
            var current = days[network] ?? Day(start: now, count: 0)
            if now.timeIntervalSince(current.start) >= day || now < current.start {
                current = Day(start: now, count: 0)
            }
            current.count += 1
            if days[network] == nil && days.count >= capacity { makeRoom(&days, now: now) }
            days[network] = current
        }
    }

    var remembered: Int { days.withLock { $0.count } }

    private func makeRoom(_ days: inout [String: Day], now: Date) {
        days = days.filter { now.timeIntervalSince($0.value.start) < day }
        if days.count >= capacity, let oldest = days.min(by: { $0.value.start < $1.value.start }) {
            days[oldest.key] = nil
        }
    }
}
