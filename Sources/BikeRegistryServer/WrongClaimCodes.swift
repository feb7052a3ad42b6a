import Foundation
import Synchronization

/// Claim codes that named no beacon which could be claimed, counted per network (an IPv4 address, an IPv6 /64):
/// a network that sends `limit` in a day is refused registration until that day is over (issue 38). A day starts
/// at its first wrong code. 60-bit codes cannot be guessed at 10 a day; this keeps anyone from trying at the rate
/// the per-minute limit allows. Counted per server, in memory: a restart forgives.
final class WrongClaimCodes: Sendable {
    private struct Day {
        var start: Date
        var count: Int
    }

    let limit: Int
    let day: TimeInterval
    /// Networks remembered at most; past it the days that are over are forgotten, then the oldest.
    let capacity: Int
    private let days = Mutex([String: Day]())

    init(limit: Int = 10, day: TimeInterval = 86_400, capacity: Int = 200_000) {
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

    /// Counts one wrong code from `network`.
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
