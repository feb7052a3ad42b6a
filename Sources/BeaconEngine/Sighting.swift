public import BeaconWire

/// What kind of event a sighting reports within one visit of a missing bike.
public enum SightingKind: String, Hashable, Sendable, CaseIterable {
    /// First heard.
    case enter
    /// Still here (at most one per report interval).
    case update
    /// Not heard for the exit timeout; `lastSeen` is when it was last heard.
    case exit
}

/// A missing bike heard at this station: what the reporter sends to the registry. Never carries the
/// beacon's MAC address (the engine does not have it) or anything about the owner.
public struct Sighting: Hashable, Sendable {
    public var id: SightingID
    public var kind: SightingKind
    public var bikeID: String
    public var beacon: BeaconIdentity
    /// The visit's first advert, and the latest one up to this event.
    public var firstSeen: CaptureTime
    public var lastSeen: CaptureTime
    /// Adverts heard in the visit up to this event.
    public var count: Int
    /// Smoothed RSSI (dBm), nil when the controller reported none.
    public var rssi: Double?
    public var rssiMax: Int8?
    public var measuredPower: Int8
    public var proximity: Proximity
    /// Metres, nil when the signal values make an estimate meaningless.
    public var distance: Double?

    public init(
        id: SightingID, kind: SightingKind, bikeID: String, beacon: BeaconIdentity, firstSeen: CaptureTime,
        lastSeen: CaptureTime, count: Int, rssi: Double?, rssiMax: Int8?, measuredPower: Int8,
        proximity: Proximity, distance: Double?
    ) {
        self.id = id
        self.kind = kind
        self.bikeID = bikeID
        self.beacon = beacon
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
        self.count = count
        self.rssi = rssi
        self.rssiMax = rssiMax
        self.measuredPower = measuredPower
        self.proximity = proximity
        self.distance = distance
    }
}
