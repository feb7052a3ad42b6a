public import BeaconWire

/// The region and ranging engine: matches iBeacon adverts against the configured regions and the missing-bike
/// set, ranges every beacon it hears, and turns visits of missing bikes into sightings.
///
/// Pure and single-threaded: no I/O, no clock reads, no clock at all. Time comes in with each call as an
/// `Instant`, so a replay on its capture's times (`CaptureTime`) produces the same sightings every time, and tests
/// pass any instants they like. Instants must not go backwards; callers clamp.
public struct RangingEngine<Instant: InstantProtocol & Sendable>: Sendable where Instant.Duration == Duration {

    @usableFromInline var core: EngineCore
    @usableFromInline let startedAt: Instant

    /// `missing` must have been built for `configuration.regions`.
    public init(configuration: EngineConfiguration, missing: MissingBikeSet, startingAt now: Instant) {
        core = EngineCore(configuration: configuration, missing: missing)
        startedAt = now
    }

    public var configuration: EngineConfiguration { core.configuration }
    public var missing: MissingBikeSet { core.missing }
    public var counters: EngineCounters { core.counters }
    /// Beacons being ranged now.
    public var openVisits: Int { core.openVisits }

    @inlinable
    func engineTime(_ instant: Instant) -> Int64 {
        // Capture times are nanoseconds already; the cast is resolved at compile time once specialized, and
        // spares a replay the 128-bit division inside `Duration.components` for every advert.
        if let now = instant as? CaptureTime, let start = startedAt as? CaptureTime {
            return now.nanosecondsSinceEpoch &- start.nanosecondsSinceEpoch
        }
        return startedAt.duration(to: instant).saturatingNanoseconds
    }

    /// Takes in an advert heard at `now`, first closing visits whose exit timeout has passed (so sightings come
    /// out in time order), and appends the sightings it causes.
    @inlinable
    public mutating func observe(_ advert: BeaconAdvert, at now: Instant, into sightings: inout [Sighting]) {
        core.observe(advert, at: engineTime(now), into: &sightings)
    }

    /// Closes every visit not heard for its exit timeout by `now`, appending `exit` sightings in last-seen order.
    @inlinable
    public mutating func expire(now: Instant, into sightings: inout [Sighting]) {
        core.expire(now: engineTime(now), into: &sightings)
    }

    /// Closes every open visit as if its beacon left right after it was last heard: the end of a replay.
    @inlinable
    public mutating func finish(into sightings: inout [Sighting]) {
        core.finish(into: &sightings)
    }

    /// Swaps in a new missing-bike set. Open visits keep their state; from the next advert on, bikes are judged
    /// by the new set (a bike newly missing gets its `enter`, one found gets nothing more).
    public mutating func replaceMissingSet(_ set: MissingBikeSet) {
        core.replaceMissingSet(set)
    }

    /// The station beacon's state at `now`; silence is counted from the start until it is first heard.
    public func station(now: Instant) -> StationStatus {
        core.station(now: engineTime(now))
    }

    /// Every beacon being ranged, for `beacond scan` and `status`, in UUID, major and minor order.
    public func rangedBeacons() -> [RangedBeacon] { core.rangedBeacons() }
}

/// A beacon being ranged, as `scan` and `status` show it.
public struct RangedBeacon: Hashable, Sendable {
    public var beacon: BeaconIdentity
    public var firstSeen: CaptureTime
    public var lastSeen: CaptureTime
    public var count: Int
    public var rssi: Double?
    public var proximity: Proximity
    public var distance: Double?
    public var missing: Bool
}
