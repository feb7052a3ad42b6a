/// A clock for engine tests whose instants are offsets from an arbitrary origin: unrelated to `CaptureTime`,
/// so the tests show the engine works on any clock, not only the replay's. It never sleeps; tests pass its
/// instants to the engine by hand.
public struct TestClock: Clock {
    public struct Instant: InstantProtocol {
        public var offset: Duration

        public init(offset: Duration) { self.offset = offset }

        public static func seconds(_ seconds: Double) -> Instant { Instant(offset: .seconds(seconds)) }

        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    public init() {}

    public var now: Instant { Instant(offset: .zero) }
    public var minimumResolution: Duration { .nanoseconds(1) }

    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
    }
}
