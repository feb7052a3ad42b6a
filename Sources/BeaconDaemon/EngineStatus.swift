public import BeaconEngine
import LockedValue

/// What the engine loop publishes once a second for `status` and the watchdog.
public final class EngineStatus: Sendable {
    public struct Snapshot: Sendable {
        /// Monotonic nanoseconds of the engine's last tick; the watchdog's proof of life.
        public var heartbeat: Int64?
        public var counters = EngineCounters()
        public var openVisits = 0
        public var station: StationStatus?
        public var missing = 0
        public var ring = AdvertRing.Statistics(pushed: 0, consumed: 0, overwritten: 0)
        public var rates = RateMeter()
        /// Why the last outbox commit failed, while it keeps failing.
        public var commitError: String?
        /// Sightings held in memory because the outbox would not take them.
        public var uncommitted = 0
    }

    private let snapshot = LockedValue(Snapshot())

    public init() {}

    public var current: Snapshot { snapshot.withLock { $0 } }

    func update(_ body: (inout Snapshot) -> Void) { snapshot.withLock { body(&$0) } }
}

/// Adverts per second over the last ten seconds or so, from counters sampled once a second.
public struct RateMeter: Sendable {
    private var samples: [(monotonic: Int64, adverts: UInt64, beacons: UInt64)] = []
    private static let window = 11

    public init() {}

    mutating func add(monotonic: Int64, adverts: UInt64, beacons: UInt64) {
        samples.append((monotonic, adverts, beacons))
        if samples.count > Self.window { samples.removeFirst(samples.count - Self.window) }
    }

    /// (adverts/s, iBeacons/s); zero until two samples exist.
    public var perSecond: (adverts: Double, beacons: Double) {
        guard let first = samples.first, let last = samples.last, last.monotonic > first.monotonic else {
            return (0, 0)
        }
        let seconds = Double(last.monotonic - first.monotonic) / 1e9
        return (Double(last.adverts &- first.adverts) / seconds, Double(last.beacons &- first.beacons) / seconds)
    }
}
