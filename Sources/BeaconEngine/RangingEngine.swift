public import BeaconWire

/// The region and ranging engine: matches iBeacon adverts against the configured regions and the missing-bike
/// set, ranges every beacon it hears, and turns visits of missing bikes into sightings.
///
/// Pure and single-threaded: no I/O, no clock reads. Time comes in with each call as an instant of `C`, so a
/// replay on a `ManualClock` produces the same sightings every time, and live capture uses a monotonic clock
/// (`ContinuousClock`) that wall-clock jumps cannot disturb.
public struct RangingEngine<C: Clock>: Sendable where C.Duration == Duration, C.Instant: Sendable {
    public typealias Instant = C.Instant

    public let configuration: EngineConfiguration
    public private(set) var missing: MissingBikeSet
    public private(set) var counters = EngineCounters()

    private var visits: [BeaconVisit<Instant>] = []
    /// Visit position by `region << 32 | major << 16 | minor`.
    private var visitIndex: [UInt64: Int] = [:]
    private var nextSweep: Instant
    private let startedAt: Instant
    private var stationLastHeard: (instant: Instant, time: CaptureTime)?

    /// `missing` must have been built for `configuration.regions`.
    public init(configuration: EngineConfiguration, missing: MissingBikeSet, startingAt now: Instant) {
        precondition(missing.regions == configuration.regions, "missing-bike set built for other regions")
        self.configuration = configuration
        self.missing = missing
        self.startedAt = now
        self.nextSweep = now.advanced(by: configuration.sweepInterval)
        visits.reserveCapacity(1024)
        visitIndex.reserveCapacity(1024)
    }

    /// Beacons being ranged now.
    public var openVisits: Int { visits.count }

    /// Takes in an advert heard at `now`, first closing visits whose exit timeout has passed (so sightings come
    /// out in time order), and appends the sightings it causes.
    @inlinable
    public mutating func observe(_ advert: BeaconAdvert, at now: Instant, into sightings: inout [Sighting]) {
        if now >= nextSweepInstant { expire(now: now, into: &sightings) }
        observeWithoutSweep(advert, at: now, into: &sightings)
    }

    @usableFromInline var nextSweepInstant: Instant { nextSweep }

    @usableFromInline
    mutating func observeWithoutSweep(_ advert: BeaconAdvert, at now: Instant, into sightings: inout [Sighting]) {
        counters.adverts += 1
        let beacon = advert.beacon
        if let station = configuration.stationBeacon, station.matches(beacon) {
            counters.stationAdverts += 1
            stationLastHeard = (now, advert.time)
            return
        }
        guard let region = configuration.regions.firstIndex(where: { $0.contains(beacon) }) else {
            counters.outsideRegions += 1
            return
        }
        let key = UInt64(region) << 32 | UInt64(beacon.major) << 16 | UInt64(beacon.minor)
        let position: Int
        if let existing = visitIndex[key] {
            position = existing
            visits[position].heard(advert, at: now)
        } else {
            position = visits.count
            visits.append(BeaconVisit(region: region, advert: advert, at: now))
            visitIndex[key] = position
            counters.visitsOpened += 1
        }
        let isMissing = missing.contains(region: region, major: beacon.major, minor: beacon.minor)
        guard let report = visits[position].policy.heard(missing: isMissing, at: now, reportInterval: configuration.reportInterval)
        else { return }
        // Rare from here on: an enter or update of a missing bike.
        let bikeID = missing.record(region: region, major: beacon.major, minor: beacon.minor)?.id ?? "?"
        visits[position].bikeID = bikeID
        emit(visits[position].sighting(report, bikeID: bikeID, station: configuration.stationID), into: &sightings)
    }

    /// Closes every visit not heard for its exit timeout by `now`, appending `exit` sightings in last-seen order.
    public mutating func expire(now: Instant, into sightings: inout [Sighting]) {
        nextSweep = now.advanced(by: configuration.sweepInterval)
        var gone: [BeaconVisit<Instant>] = []
        var position = visits.count - 1
        while position >= 0 {
            if visits[position].lastSeen.duration(to: now) > visits[position].exitTimeout(configuration) {
                gone.append(removeVisit(at: position))
            }
            position -= 1
        }
        close(gone, into: &sightings)
    }

    /// Closes every open visit as if its beacon left right after it was last heard: the end of a replay.
    public mutating func finish(into sightings: inout [Sighting]) {
        let gone = visits
        visits.removeAll(keepingCapacity: true)
        visitIndex.removeAll(keepingCapacity: true)
        close(gone, into: &sightings)
    }

    /// Swaps in a new missing-bike set. Open visits keep their state; from the next advert on, bikes are judged
    /// by the new set (a bike newly missing gets its `enter`, one found gets nothing more).
    public mutating func replaceMissingSet(_ set: MissingBikeSet) {
        precondition(set.regions == configuration.regions, "missing-bike set built for other regions")
        missing = set
        counters.setsReplaced += 1
    }

    /// The station beacon's state at `now`.
    public func station(now: Instant) -> StationStatus {
        let silence = (stationLastHeard?.instant ?? startedAt).duration(to: now)
        guard configuration.stationBeacon != nil else {
            return StationStatus(configured: false, lastHeard: nil, silence: .zero, healthy: true)
        }
        return StationStatus(
            configured: true, lastHeard: stationLastHeard?.time, silence: silence,
            healthy: silence <= configuration.stationSilenceLimit)
    }

    /// Every beacon being ranged, for `beacond scan` and `status`, in region, major and minor order.
    public func rangedBeacons() -> [RangedBeacon] {
        visits.map { visit in
            let distance = visit.distance
            return RangedBeacon(
                beacon: visit.beacon, firstSeen: visit.firstSeenTime, lastSeen: visit.lastSeenTime, count: visit.count,
                rssi: visit.filter?.estimate, proximity: Proximity(distance: distance), distance: distance,
                missing: missing.contains(region: visit.region, major: visit.beacon.major, minor: visit.beacon.minor))
        }
        .sorted { ($0.beacon.uuid.rawValue, $0.beacon.major, $0.beacon.minor) < ($1.beacon.uuid.rawValue, $1.beacon.major, $1.beacon.minor) }
    }

    private mutating func removeVisit(at position: Int) -> BeaconVisit<Instant> {
        visitIndex[Self.key(visits[position])] = nil
        visits.swapAt(position, visits.count - 1)
        let visit = visits.removeLast()
        if position < visits.count { visitIndex[Self.key(visits[position])] = position }
        return visit
    }

    private mutating func close(_ gone: [BeaconVisit<Instant>], into sightings: inout [Sighting]) {
        counters.visitsClosed += gone.count
        // Deterministic order whatever the table's layout: by when each was last heard, then by beacon.
        let ordered = gone.sorted {
            ($0.lastSeenTime, $0.beacon.uuid.rawValue, $0.beacon.major, $0.beacon.minor)
                < ($1.lastSeenTime, $1.beacon.uuid.rawValue, $1.beacon.major, $1.beacon.minor)
        }
        for visit in ordered {
            guard let report = visit.policy.left() else { continue }
            emit(visit.sighting(report, bikeID: visit.bikeID ?? "?", station: configuration.stationID), into: &sightings)
        }
    }

    private mutating func emit(_ sighting: Sighting, into sightings: inout [Sighting]) {
        counters.count(sighting.kind)
        sightings.append(sighting)
    }

    private static func key(_ visit: BeaconVisit<Instant>) -> UInt64 {
        UInt64(visit.region) << 32 | UInt64(visit.beacon.major) << 16 | UInt64(visit.beacon.minor)
    }
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
