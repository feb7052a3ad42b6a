public import BeaconWire

/// How the engine ranges beacons and when it reports sightings. The defaults are the issue's: FindMyBike
/// region, 30 s exit timeout, one update per 10 minutes.
public struct EngineConfiguration: Hashable, Sendable {
    /// Names this station in every sighting id.
    public var stationID: String
    /// Beacons outside every region are ignored (counted, not ranged).
    public var regions: [BeaconRegion]
    /// A beacon not heard for this long has left.
    public var exitTimeout: Duration
    /// For beacons that advertise slowly the timeout grows to this many of their observed intervals…
    public var exitTimeoutIntervals: Int
    /// …up to this much.
    public var maximumExitTimeout: Duration
    /// At most one `update` sighting per visit per this interval.
    public var reportInterval: Duration
    /// The café's own beacon, if it has one: its silence means the radio, not the car park, is empty.
    public var stationBeacon: BeaconIdentity?
    /// How long the station beacon may be silent before capture counts as unhealthy.
    public var stationSilenceLimit: Duration
    /// How often visits are checked for exits. Exits are detected at most this late; `lastSeen` stays exact.
    public var sweepInterval: Duration

    public init(
        stationID: String = "beacond", regions: [BeaconRegion] = [.findMyBike], exitTimeout: Duration = .seconds(30),
        exitTimeoutIntervals: Int = 5, maximumExitTimeout: Duration = .seconds(300),
        reportInterval: Duration = .seconds(600), stationBeacon: BeaconIdentity? = nil,
        stationSilenceLimit: Duration = .seconds(120), sweepInterval: Duration = .seconds(1)
    ) {
        self.stationID = stationID
        self.regions = regions
        self.exitTimeout = exitTimeout
        self.exitTimeoutIntervals = exitTimeoutIntervals
        self.maximumExitTimeout = maximumExitTimeout
        self.reportInterval = reportInterval
        self.stationBeacon = stationBeacon
        self.stationSilenceLimit = stationSilenceLimit
        self.sweepInterval = sweepInterval
    }
}
