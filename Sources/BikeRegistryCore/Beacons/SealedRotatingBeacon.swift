/// A claimed rotating beacon as the server needs it to list its missing bike and to verify its sightings: the key
/// still sealed (`BeaconKeySealer`, the server holds the key file), and what its verified sightings taught of its
/// clock.
public struct SealedRotatingBeacon: Sendable, Equatable {
    public var id: String
    /// The region's UUID, which the beacon advertises.
    public var uuid: String
    public var period: Int
    public var sealedKey: String
    /// Seconds its clock runs ahead, in whole periods (`RotatingWindow.offset`).
    public var clockOffset: Int64

    public init(id: String, uuid: String, period: Int, sealedKey: String, clockOffset: Int64) {
        self.id = id
        self.uuid = uuid
        self.period = period
        self.sealedKey = sealedKey
        self.clockOffset = clockOffset
    }
}

/// How a rotating beacon's bike is kept in the bike table, whose beacon columns are a fixed identity, NOT NULL and
/// unique: the beacon's id in `uuid` (unique, and no UUID) and a major and minor no iBeacon advertises. So a fixed
/// beacon's queries (the list, a finder's lookup, open registration) never meet it, and the rotating beacon's row
/// points back at the bike.
public enum RotatingBeaconClaim {
    public static let major = -1
    public static let minor = -1

    /// The bike table's `uuid` for a lookup by identity: a fixed beacon's UUID in capitals, as registered; a rotating
    /// beacon's id as it is.
    package static func stored(_ uuid: String, major: Int) -> String { major < 0 ? uuid : uuid.uppercased() }

    /// Whether a claim by a rotating beacon's code matches what the owner typed beside it: a UUID, if any, must be
    /// its region's; a major or minor cannot be given, since it has none that lasts.
    package static func accepts(_ match: BeaconMatch, uuid: String) -> Bool {
        match.major == nil && match.minor == nil && (match.uuid ?? uuid) == uuid
    }
}
