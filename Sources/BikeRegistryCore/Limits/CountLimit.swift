public import Foundation

/// At most `most` of something in each window of `window` seconds, per key; a key's window starts at its first count.
/// Pure: the counts are kept by the store (one row per limit and key, so every server of one database counts
/// together, issue 52), and this decides what a count means.
public struct CountLimit: Sendable, Equatable {
    /// The limit's name in the store: unique among the registry's limits, never changed once released.
    public let name: String
    public let most: Int
    public let window: TimeInterval

    public init(_ name: String, most: Int, per window: TimeInterval) {
        self.name = name
        self.most = max(1, most)
        self.window = window
    }

    /// The key everyone's count is kept under, beside each network's.
    public static let everyone = "*"

    /// A key's count in its window as the store holds it, and when that window ends.
    public struct Tally: Sendable, Equatable {
        public var count: Int
        public var windowEnd: Date

        public init(count: Int, windowEnd: Date) {
            self.count = count
            self.windowEnd = windowEnd
        }

        public static let none = Tally(count: 0, windowEnd: .distantPast)
    }

    /// Whether a tally's window is over at `now`, so the next count starts a new one: it has ended, or it ends more
    /// than a window beyond `now` (a clock stepped back, on this server or the one that began it), which would
    /// otherwise hold a key refused for longer than the limit says.
    public func isOver(_ tally: Tally, now: Date) -> Bool {
        let left = tally.windowEnd.timeIntervalSince(now)
        return left <= Self.slack || left > 2 * window
    }

    /// Times within this of each other are one: a clock's seconds added up in floating point (a window's start plus
    /// a day, against now) miss each other by a few ulps.
    public static let slack: TimeInterval = 0.001

    /// The whole seconds to wait when the thing just counted (`tally` includes it) goes past the limit; nil when
    /// it may go ahead.
    public func wait(counted tally: Tally, now: Date) -> Int? {
        guard !isOver(tally, now: now), tally.count > most else { return nil }
        return seconds(until: tally.windowEnd, now: now)
    }

    /// The whole seconds to wait when the limit is reached already, before counting (a wrong claim code is counted
    /// only once it is found wrong); nil when one more may go ahead.
    public func wait(before tally: Tally, now: Date) -> Int? {
        guard !isOver(tally, now: now), tally.count >= most else { return nil }
        return seconds(until: tally.windowEnd, now: now)
    }

    private func seconds(until end: Date, now: Date) -> Int {
        max(1, Int((min(end.timeIntervalSince(now), window) - Self.slack).rounded(.up)))
    }
}
