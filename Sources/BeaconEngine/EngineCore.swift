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
    /// Rotating beacons' bikes being heard, by bike id (`BikeVisit`).
    private var bikeVisits: [String: BikeVisit] = [:]
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
        if visits[position].route == .bike, let bikeID = visits[position].bikeID {
            observeBike(bikeID, region: region, advert: advert, missing: isMissing, at: now, into: &sightings)
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

    /// An advert of a rotating beacon's identity: its bike's visit hears it, and reports as a beacon's would.
    private mutating func observeBike(
        _ bikeID: String, region: Int, advert: BeaconAdvert, missing isMissing: Bool, at now: EngineTime,
        into sightings: inout [Sighting]
    ) {
        let interval = timing.reportInterval
        let report: SightingPolicy.Report?
        if let index = bikeVisits.index(forKey: bikeID) {
            bikeVisits.values[index].hear(advert, at: now)
            report = bikeVisits.values[index].visit.policy.heard(missing: isMissing, at: now, reportInterval: interval)
        } else {
            var visit = BikeVisit(region: region, advert: advert, at: now)
            report = visit.visit.policy.heard(missing: isMissing, at: now, reportInterval: interval)
            bikeVisits[bikeID] = visit
        }
        guard let report, let visit = bikeVisits[bikeID] else { return }
        emit(visit.sighting(report, bikeID: bikeID, station: configuration.stationID), into: &sightings)
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
        let timing = timing
        func left(_ visit: BikeVisit) -> Bool { now - visit.visit.lastSeen > visit.visit.exitTimeout(timing) }
        // Checked first, so a sweep that closes nothing allocates nothing.
        guard bikeVisits.values.contains(where: left) else { return }
        let goneBikes = bikeVisits.filter { left($0.value) }
        for id in goneBikes.keys { bikeVisits[id] = nil }
        closeBikes(goneBikes, into: &sightings)
    }

    @usableFromInline
    mutating func finish(into sightings: inout [Sighting]) {
        // Moved out, not copied: keeping the table's capacity while `gone` still shared it made a second table,
        // the largest allocation of a shutdown.
        var gone: [BeaconVisit] = []
        swap(&gone, &visits)
        visitIndex.removeAll()
        close(&gone, into: &sightings)
        var goneBikes: [String: BikeVisit] = [:]
        swap(&goneBikes, &bikeVisits)
        closeBikes(goneBikes, into: &sightings)
    }

    mutating func replaceMissingSet(_ set: MissingBikeSet) {
        precondition(set.regions == configuration.regions, "missing-bike set built for other regions")
        missing = set
        counters.setsReplaced += 1
        // A rotating beacon's bike no longer missing is listed no more, under any identity; its visit says nothing
        // more, as a fixed beacon's says nothing once the set says it was found. Its identity heard last is listed
        // while it is missing: the registry's window always holds the identity of the beacon's present.
        for bikeID in Array(bikeVisits.keys) {
            guard let visit = bikeVisits[bikeID],
                !set.contains(region: visit.visit.region, major: visit.heard.major, minor: visit.heard.minor)
            else { continue }
            _ = bikeVisits[bikeID]?.visit.policy.heard(
                missing: false, at: visit.visit.lastSeen, reportInterval: timing.reportInterval)
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
    private mutating func closeBikes(_ gone: [String: BikeVisit], into sightings: inout [Sighting]) {
        guard !gone.isEmpty else { return }
        let ordered = gone.sorted { ($0.value.visit.lastSeenTime, $0.key) < ($1.value.visit.lastSeenTime, $1.key) }
        for (bikeID, visit) in ordered {
            guard let report = visit.visit.policy.left() else { continue }
            emit(visit.sighting(report, bikeID: bikeID, station: configuration.stationID), into: &sightings)
        }
    }

    private mutating func emit(_ sighting: Sighting, into sightings: inout [Sighting]) {
        counters.count(sighting.kind)
        sightings.append(sighting)
    }
}
