/// Exponential backoff with jitter: attempt n waits between half and all of `base · 2ⁿ`, capped. Half is
/// fixed so retries never bunch up near zero (a request storm), and the random half spreads thousands of
/// stations that failed at the same moment (a registry outage) over the window.
public struct Backoff: Sendable {
    public var base: Duration
    public var cap: Duration
    public private(set) var attempt = 0

    public init(base: Duration, cap: Duration) {
        self.base = base
        self.cap = max(cap, base)
    }

    /// The delay before the next attempt; each call doubles the window.
    public mutating func next(using random: inout some RandomNumberGenerator) -> Duration {
        var window = base
        for _ in 0..<min(attempt, 40) where window < cap { window = window * 2 }
        window = min(window, cap)
        attempt += 1
        let half = window / 2
        let jitter = Double.random(in: 0...1, using: &random)
        return half + half * jitter
    }

    public mutating func reset() { attempt = 0 }
}

/// The refresh period with ±`fraction` jitter, so stations that booted together drift apart.
public func jittered(_ period: Duration, fraction: Double, using random: inout some RandomNumberGenerator) -> Duration {
    let factor = 1 + Double.random(in: -fraction...fraction, using: &random)
    return period * factor
}
