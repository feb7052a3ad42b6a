import BeaconWire

/// The engine's state and per-advert logic on plain engine time (see `EngineTime`); `RangingEngine` wraps it
/// with a clock.
@usableFromInline
struct EngineCore: Sendable {
    let configuration: EngineConfiguration
    let timing: EngineTiming
    var missing: MissingBikeSet
    var counters = EngineCounters()

    private var visits: [BeaconVisit] = []
    private var visitIndex: VisitIndex
    /// Rotating beacons' bikes being heard (`BikeVisit`).
    private var bikeVisits = BikeVisitTable()
    private var nextSweep: EngineTime
    private var stationLastHeard: (time: EngineTime, wall: CaptureTime)?

    init(configuration: EngineConfiguration, missing: MissingBikeSet) {
        precondition(missing.regions == configuration.regions, "missing-bike set built for other regions")
        self.configuration = configuration
        self.timing = EngineTiming(configuration)
        self.missing = missing
        self.nextSweep = timing.sweepInterval
        visitIndex = VisitIndex(regions: configuration.regions)
        visits.reserveCapacity(1024)
    }

    var openVisits: Int { visits.count }

    @usableFromInline
    mutating func observe(_ advert: BeaconAdvert, at now: EngineTime, into sightings: inout [Sighting]) {
        if now >= nextSweep { expire(now: now, into: &sightings) }
        counters.adverts += 1
        let beacon = advert.beacon
        if let station = configuration.stationBeacon, station.matches(beacon) {
            counters.stationAdverts += 1
            stationLastHeard = (now, advert.time)
            return
        }
        guard let region = regionIndex(of: beacon) else {
            counters.outsideRegions += 1
            return
        }
        let position: Int
        if let existing = visitIndex[region, beacon.major, beacon.minor] {
            position = existing
            visits[position].heard(advert, at: now)
        } else {
            position = visits.count
            visits.append(BeaconVisit(region: region, advert: advert, at: now))
            visitIndex[region, beacon.major, beacon.minor] = position
            counters.visitsOpened += 1
        }
        let isMissing = missing.contains(region: region, major: beacon.major, minor: beacon.minor)
        if isMissing, visits[position].route == .unresolved { resolveRoute(position, region: region) }
        if visits[position].route == .bike {
            observeBike(position, advert: advert, missing: isMissing, at: now, into: &sightings)
            return
        }
        guard
            let report = visits[position].policy.heard(
                missing: isMissing, at: now, reportInterval: timing.reportInterval)
        else { return }
        // Rare from here on: an enter or update of a missing bike.
        let bikeID = missing.record(region: region, major: beacon.major, minor: beacon.minor)?.id ?? "?"
        visits[position].bikeID = bikeID
        emit(visits[position].sighting(report, bikeID: bikeID, station: configuration.stationID), into: &sightings)
    }

    /// Once a visit, when its beacon is first found missing: a fixed beacon's, or an identity of a rotating
    /// beacon's bike (whose id the visit keeps, so later adverts find the bike's visit without a lookup).
    private mutating func resolveRoute(_ position: Int, region: Int) {
        let beacon = visits[position].beacon
        guard missing.isRotating(region: region, major: beacon.major, minor: beacon.minor),
            let bike = missing.record(region: region, major: beacon.major, minor: beacon.minor)
        else {
            visits[position].route = .beacon
            return
        }
        visits[position].route = .bike
        visits[position].bikeID = bike.id
    }

    /// An advert of a rotating beacon's identity (the visit at `position`): its bike's visit hears it, and reports
    /// as a beacon's would.
    private mutating func observeBike(
        _ position: Int, advert: BeaconAdvert, missing isMissing: Bool, at now: EngineTime,
        into sightings: inout [Sighting]
    ) {
        let bikeID = visits[position].bikeID ?? "?"
        let slot: Int
        if let open = bikeVisits.slot(of: bikeID, cached: visits[position].bikeSlot) {
            slot = open
            bikeVisits[slot].hear(advert, at: now)
        } else {
            slot = bikeVisits.open(BikeVisit(bikeID: bikeID, region: visits[position].region, advert: advert, at: now))
        }
        visits[position].bikeSlot = Int32(truncatingIfNeeded: slot)
        guard
            let report = bikeVisits[slot].visit.policy.heard(
                missing: isMissing, at: now, reportInterval: timing.reportInterval)
        else { return }
        emit(bikeVisits[slot].sighting(report, station: configuration.stationID), into: &sightings)
    }

    private func regionIndex(of beacon: IBeacon) -> Int? {
        for index in configuration.regions.indices where configuration.regions[index].contains(beacon) { return index }
        return nil
    }

    @usableFromInline
    mutating func expire(now: EngineTime, into sightings: inout [Sighting]) {
        nextSweep = now &+ timing.sweepInterval
        var gone: [BeaconVisit] = []
        var position = visits.count - 1
        while position >= 0 {
            if now - visits[position].lastSeen > visits[position].exitTimeout(timing) {
                gone.append(removeVisit(at: position))
            }
            position -= 1
        }
        close(&gone, into: &sightings)
        guard !bikeVisits.isEmpty else { return }
        let timing = timing
        closeBikes(
            bikeVisits.close { now - $0.visit.lastSeen > $0.visit.exitTimeout(timing) }, into: &sightings)
    }

    @usableFromInline
    mutating func finish(into sightings: inout [Sighting]) {
        // Moved out, not copied: keeping the table's capacity while `gone` still shared it made a second table,
        // the largest allocation of a shutdown.
        var gone: [BeaconVisit] = []
        swap(&gone, &visits)
        visitIndex.removeAll()
        close(&gone, into: &sightings)
        closeBikes(bikeVisits.close { _ in true }, into: &sightings)
    }

    mutating func replaceMissingSet(_ set: MissingBikeSet) {
        precondition(set.regions == configuration.regions, "missing-bike set built for other regions")
        missing = set
        counters.setsReplaced += 1
        // A rotating beacon's bike no longer missing is listed no more, under any identity; its visit says nothing
        // more, as a fixed beacon's says nothing once the set says it was found. Its identity heard last is listed
        // while it is missing: the registry's window always holds the identity of the beacon's present.
        let interval = timing.reportInterval
        bikeVisits.updateEach { bike in
            guard !set.contains(region: bike.visit.region, major: bike.heard.major, minor: bike.heard.minor) else {
                return
            }
            _ = bike.visit.policy.heard(missing: false, at: bike.visit.lastSeen, reportInterval: interval)
        }
    }

    /// The station beacon's state at `now`.
    func station(now: EngineTime) -> StationStatus {
        guard configuration.stationBeacon != nil else {
            return StationStatus(configured: false, lastHeard: nil, silence: .zero, healthy: true)
        }
        let silence = now - (stationLastHeard?.time ?? 0)
        return StationStatus(
            configured: true, lastHeard: stationLastHeard?.wall, silence: .nanoseconds(silence),
            healthy: silence <= timing.stationSilenceLimit)
    }

    func rangedBeacons() -> [RangedBeacon] {
        visits.map { visit in
            let distance = visit.distance
            return RangedBeacon(
                beacon: visit.beacon, firstSeen: visit.firstSeenTime, lastSeen: visit.lastSeenTime, count: visit.count,
                rssi: visit.filter?.estimate, proximity: Proximity(distance: distance), distance: distance,
                missing: missing.contains(region: visit.region, major: visit.beacon.major, minor: visit.beacon.minor))
        }
        .sorted {
            ($0.beacon.uuid.rawValue, $0.beacon.major, $0.beacon.minor) < (
                $1.beacon.uuid.rawValue, $1.beacon.major, $1.beacon.minor
            )
        }
    }

    private mutating func removeVisit(at position: Int) -> BeaconVisit {
        let removed = visits[position]
        visitIndex[removed.region, removed.beacon.major, removed.beacon.minor] = nil
        visits.swapAt(position, visits.count - 1)
        let visit = visits.removeLast()
        if position < visits.count {
            let moved = visits[position]
            visitIndex[moved.region, moved.beacon.major, moved.beacon.minor] = position
        }
        return visit
    }

    private mutating func close(_ gone: inout [BeaconVisit], into sightings: inout [Sighting]) {
        counters.visitsClosed += gone.count
        // Deterministic order whatever the table's layout: by when each was last heard, then by beacon (sorted in
        // place: the visits are the caller's to give up).
        gone.sort {
            ($0.lastSeenTime, $0.beacon.uuid.rawValue, $0.beacon.major, $0.beacon.minor)
                < ($1.lastSeenTime, $1.beacon.uuid.rawValue, $1.beacon.major, $1.beacon.minor)
        }
        for visit in gone {
            guard let report = visit.policy.left() else { continue }
            emit(
                visit.sighting(report, bikeID: visit.bikeID ?? "?", station: configuration.stationID), into: &sightings)
        }
    }

    /// Rotating beacons' bikes that left: an exit each that was being reported, in the same order as `close`.
    private mutating func closeBikes(_ gone: [BikeVisit], into sightings: inout [Sighting]) {
        guard !gone.isEmpty else { return }
        for visit in gone.sorted(by: { ($0.visit.lastSeenTime, $0.bikeID) < ($1.visit.lastSeenTime, $1.bikeID) }) {
            guard let report = visit.visit.policy.left() else { continue }
            emit(visit.sighting(report, station: configuration.stationID), into: &sightings)
        }
    }

    private mutating func emit(_ sighting: Sighting, into sightings: inout [Sighting]) {
        counters.count(sighting.kind)
        sightings.append(sighting)
    }
}
