import BeaconWire

/// Ranging state of one beacon from the first advert heard until it leaves.
struct BeaconVisit: Sendable {
    // Fields touched by every advert come first, so they share the visit's first cache line.
    /// Monotonic engine time decides timeouts; capture (wall-clock) times are what sightings report. In a
    /// replay they are the same; live, the wall clock may jump (a Pi has no RTC and sets its clock from NTP).
    var lastSeen: EngineTime
    var lastSeenTime: CaptureTime
    var count = 1
    /// Exponentially weighted mean of the gaps between adverts (weight 1/8 per new gap), nanoseconds;
    /// negative until the second advert.
    var meanInterval: EngineTime = -1
    var filter: RSSIFilter?
    var rssiMax: Int8?
    var measuredPower: Int8
    var policy = SightingPolicy()
    let region: Int
    let beacon: BeaconIdentity
    let firstSeen: EngineTime
    let firstSeenTime: CaptureTime
    /// The missing bike this visit reported, kept so an exit names it even if the set changed since; for a rotating
    /// beacon's identity, the bike whose visit its adverts go to.
    var bikeID: String?
    var route = VisitRoute.unresolved
    /// Where its bike's visit was last found (`BikeVisitTable`); -1 before.
    var bikeSlot: Int32 = -1

    init(region: Int, advert: BeaconAdvert, at now: EngineTime) {
        self.region = region
        self.beacon = BeaconIdentity(uuid: advert.beacon.uuid, major: advert.beacon.major, minor: advert.beacon.minor)
        firstSeen = now
        lastSeen = now
        firstSeenTime = advert.time
        lastSeenTime = advert.time
        measuredPower = advert.beacon.measuredPower
        if let rssi = advert.rssi {
            filter = RSSIFilter(first: rssi)
            rssiMax = rssi
        }
    }

    mutating func heard(_ advert: BeaconAdvert, at now: EngineTime) {
        let gap = now - lastSeen
        meanInterval = meanInterval < 0 ? gap : meanInterval + (gap - meanInterval) / 8
        lastSeen = now
        lastSeenTime = max(lastSeenTime, advert.time)
        count += 1
        measuredPower = advert.beacon.measuredPower
        if let rssi = advert.rssi {
            if filter == nil {
                filter = RSSIFilter(first: rssi)
            } else {
                filter!.update(rssi, elapsedSeconds: Double(gap) * 1e-9)
            }
            rssiMax = max(rssiMax ?? rssi, rssi)
        }
    }

    /// How long silence means "left": the configured timeout, lengthened for a beacon whose adverts are
    /// sparse (to `exitTimeoutIntervals` of its mean interval), capped.
    func exitTimeout(_ timing: EngineTiming) -> EngineTime {
        guard meanInterval >= 0 else { return timing.exitTimeout }
        let adaptive = meanInterval &* timing.exitTimeoutIntervals
        return min(max(timing.exitTimeout, adaptive), timing.maximumExitTimeout)
    }

    var distance: Double? { DistanceEstimate.metres(rssi: filter?.estimate, measuredPower: measuredPower) }

    func sighting(_ report: SightingPolicy.Report, bikeID: String, station: String) -> Sighting {
        let distance = distance
        return Sighting(
            id: SightingID(
                station: station, beacon: beacon, firstSeen: firstSeenTime, kind: report.kind, sequence: report.sequence
            ),
            kind: report.kind, bikeID: bikeID, beacon: beacon, firstSeen: firstSeenTime, lastSeen: lastSeenTime,
            count: count, rssi: filter?.estimate, rssiMax: rssiMax, measuredPower: measuredPower,
            proximity: Proximity(distance: distance), distance: distance)
    }
}
