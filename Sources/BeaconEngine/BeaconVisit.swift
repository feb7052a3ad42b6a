import BeaconWire

/// Ranging state of one beacon from the first advert heard until it leaves.
struct BeaconVisit<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    let region: Int
    let beacon: BeaconIdentity
    /// Monotonic instants decide timeouts; capture (wall-clock) times are what sightings report. In a replay
    /// they are the same; live, the wall clock may jump (a Pi has no RTC and sets its clock from NTP).
    let firstSeen: Instant
    let firstSeenTime: CaptureTime
    var lastSeen: Instant
    var lastSeenTime: CaptureTime
    var count = 1
    var filter: RSSIFilter?
    var rssiMax: Int8?
    var measuredPower: Int8
    /// Exponentially weighted mean of the gaps between adverts (weight 1/8 per new gap), nil until the second.
    var meanInterval: Duration?
    var policy = SightingPolicy<Instant>()
    /// The missing bike this visit reported, kept so an exit names it even if the set changed since.
    var bikeID: String?

    init(region: Int, advert: BeaconAdvert, at now: Instant) {
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

    mutating func heard(_ advert: BeaconAdvert, at now: Instant) {
        let gap = lastSeen.duration(to: now)
        meanInterval = meanInterval.map { $0 + (gap - $0) / 8 } ?? gap
        lastSeen = now
        lastSeenTime = max(lastSeenTime, advert.time)
        count += 1
        measuredPower = advert.beacon.measuredPower
        if let rssi = advert.rssi {
            if filter == nil {
                filter = RSSIFilter(first: rssi)
            } else {
                filter!.update(rssi, elapsedSeconds: gap.seconds)
            }
            rssiMax = max(rssiMax ?? rssi, rssi)
        }
    }

    /// How long silence means "left": the configured timeout, lengthened for a beacon whose adverts are
    /// sparse (to `exitTimeoutIntervals` of its mean interval), capped.
    func exitTimeout(_ configuration: EngineConfiguration) -> Duration {
        guard let meanInterval else { return configuration.exitTimeout }
        let adaptive = meanInterval * configuration.exitTimeoutIntervals
        return min(max(configuration.exitTimeout, adaptive), max(configuration.maximumExitTimeout, configuration.exitTimeout))
    }

    var distance: Double? { DistanceEstimate.metres(rssi: filter?.estimate, measuredPower: measuredPower) }

    func sighting(_ report: SightingPolicy<Instant>.Report, bikeID: String, station: String) -> Sighting {
        let distance = distance
        return Sighting(
            id: SightingID(station: station, beacon: beacon, firstSeen: firstSeenTime, kind: report.kind, sequence: report.sequence),
            kind: report.kind, bikeID: bikeID, beacon: beacon, firstSeen: firstSeenTime, lastSeen: lastSeenTime,
            count: count, rssi: filter?.estimate, rssiMax: rssiMax, measuredPower: measuredPower,
            proximity: Proximity(distance: distance), distance: distance)
    }
}

extension Duration {
    /// As a floating-point number of seconds.
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) * 1e-18
    }
}
