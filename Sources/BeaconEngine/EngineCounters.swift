/// What the engine has done since it started, for `status` and the replay summary.
public struct EngineCounters: Hashable, Sendable {
    /// iBeacon adverts handed to the engine.
    public var adverts = 0
    /// Adverts from the station's own beacon.
    public var stationAdverts = 0
    /// Adverts from beacons in none of the configured regions (ignored).
    public var outsideRegions = 0
    public var visitsOpened = 0
    public var visitsClosed = 0
    public var enters = 0
    public var updates = 0
    public var exits = 0
    /// Missing-bike sets taken in after the first.
    public var setsReplaced = 0

    public init() {}

    public var sightings: Int { enters + updates + exits }

    mutating func count(_ kind: SightingKind) {
        switch kind {
        case .enter: enters += 1
        case .update: updates += 1
        case .exit: exits += 1
        }
    }
}
