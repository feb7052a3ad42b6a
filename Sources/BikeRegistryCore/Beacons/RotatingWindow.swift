public import Crypto

/// Which of a rotating beacon's identities the registry accepts at a moment (docs/rotating-beacon.md, "The
/// clock"): the epochs within `span` either side of the epoch the beacon's clock shows, as far as its learned
/// offset says. It lists them to stations while the bike is missing, and verifies each sighting against them. Pure:
/// no clock, no storage; times are whole seconds since 1970.
public struct RotatingWindow: Hashable, Sendable {
    public let period: UInt32
    /// Seconds the beacon's clock runs ahead of true time (behind, when negative), in whole periods: learned from
    /// its verified sightings (`learn`), as TOTP resynchronises in time steps.
    public let offset: Int64
    /// Epochs accepted either side of the centre.
    public let halfWidth: Int64

    /// ±2 hours by default.
    public static let span: Int64 = 7_200
    /// At most this many epochs either side, so a short period cannot make a bike's list entry larger than a
    /// station reads (64 KiB: 1,001 identities at about 14 bytes each).
    public static let maximumHalfWidth: Int64 = 500

    public init(period: UInt32, offset: Int64 = 0, span: Int64 = RotatingWindow.span) {
        self.period = max(period, 1)
        self.offset = offset
        halfWidth = min(max(span / Int64(max(period, 1)), 0), Self.maximumHalfWidth)
    }

    /// The epoch the beacon shows at true time `time`, by its learned offset.
    public func centre(at time: Int64) -> Int64 { Self.floorDivide(time + offset, Int64(period)) }

    /// When the beacon's epoch in progress at true time `time` began. A learned offset is whole periods, so every
    /// beacon's epochs begin at multiples of its period since 1970, whatever its offset.
    public func epochStart(at time: Int64) -> Int64 { Self.floorDivide(time, Int64(period)) * Int64(period) }

    /// The epochs accepted at `time`, oldest first (none before epoch 0).
    public func epochs(at time: Int64) -> ClosedRange<Int64> {
        let centre = centre(at: time)
        return max(centre - halfWidth, 0)...max(centre + halfWidth, 0)
    }

    /// The identities of `epochs(at:)`, in order: what the stations' list gives for the bike.
    public func identities(key: SymmetricKey, at time: Int64) -> [RotatingIdentity] {
        epochs(at: time).map { RotatingIdentity(key: key, epoch: UInt64($0)) }
    }

    /// The epoch within the window at `time` whose identity is (`major`, `minor`), the one nearest the centre when
    /// two match (a chance of 2^-32 a pair); nil when none does.
    public func verify(key: SymmetricKey, at time: Int64, major: UInt16, minor: UInt16) -> Int64? {
        let centre = centre(at: time)
        var best: Int64?
        for epoch in epochs(at: time) {
            let identity = RotatingIdentity(key: key, epoch: UInt64(epoch))
            guard identity.major == major, identity.minor == minor else { continue }
            if best.map({ abs(epoch - centre) < abs($0 - centre) }) ?? true { best = epoch }
        }
        return best
    }

    /// The offset a sighting verified in `epoch` at true time `time` shows: the beacon's clock was that many whole
    /// periods ahead. Taken whole, as TOTP does: a clock drifting tens of parts per million moves a period in days.
    public func learn(epoch: Int64, at time: Int64) -> Int64 {
        (epoch - Self.floorDivide(time, Int64(period))) * Int64(period)
    }

    package static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        let quotient = value / divisor
        return (value % divisor != 0 && (value < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}
