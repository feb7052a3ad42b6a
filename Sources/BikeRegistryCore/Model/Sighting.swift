public import Foundation

/// A sighting as a station posts it (docs/registry-api.yaml, Sighting), the fields the registry keeps.
public struct SightingReport: Sendable, Equatable {
    public enum Kind: String, Sendable { case enter, update, exit }

    public var sightingId: String
    public var bikeId: String
    public var kind: Kind
    public var date: Date
    public var firstSeen: Date
    public var lastSeen: Date
    public var proximity: String
    public var rssi: Double?
    public var count: Int
    /// The station's own first-seen time, which names the visit (`VisitNotifications`): the same as `firstSeen`
    /// unless the station's clock was not believed and the times were replaced (`StationClockCheck`).
    public var visitStart: Date
    /// The station's times were not believed: every time field is when the registry received it.
    public var timesAsReceived = false
    /// The identity the station heard at `date`, as it sent it.
    public var heardMajor = 0
    public var heardMinor = 0
    /// The server found the identity heard to be the bike's rotating beacon's for an epoch within its window
    /// (`RotatingWindow.verify`). A sighting of a rotating beacon's bike without it is stored unverified and owes
    /// its owner nothing; a fixed beacon's bike does not need it.
    public var verifiedRotating = false

    public init(
        sightingId: String, bikeId: String, kind: Kind, date: Date, firstSeen: Date, lastSeen: Date, proximity: String,
        rssi: Double?, count: Int
    ) {
        self.sightingId = sightingId
        self.bikeId = bikeId
        self.kind = kind
        self.date = date
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
        self.proximity = proximity
        self.rssi = rssi
        self.count = count
        visitStart = firstSeen
    }
}

public enum RecordOutcome: Sendable, Equatable {
    /// Stored; `notifications` messages are now owed to the owner (0 for a bike not missing, or unknown).
    case recorded(notifications: Int)
    /// This sightingId is stored already: nothing changed.
    case repeated
}

/// One sighting as its owner sees it.
public struct OwnerSighting: Sendable, Equatable {
    public var kind: String
    public var seenAt: Date
    public var firstSeen: Date
    public var lastSeen: Date
    public var station: NotificationPayload.StationPlace
    public var proximity: String
    public var rssi: Double?
    public var visitId: String
    /// The station's clock was wrong: the times are when the registry received the sighting (`StationClockCheck`).
    public var timesAsReceived: Bool

    package init(
        kind: String, seenAt: Date, firstSeen: Date, lastSeen: Date, station: NotificationPayload.StationPlace,
        proximity: String, rssi: Double? = nil, visitId: String, timesAsReceived: Bool
    ) {
        self.kind = kind
        self.seenAt = seenAt
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
        self.station = station
        self.proximity = proximity
        self.rssi = rssi
        self.visitId = visitId
        self.timesAsReceived = timesAsReceived
    }
}
