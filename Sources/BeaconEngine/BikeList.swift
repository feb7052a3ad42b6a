/// The registry's list of bikes, as the engine takes it: each entry, and how many were skipped and why. The registry
/// client reads it from the registry's JSON (`BikeListReader`, `BikeList(json:)`): lenient per element and strict
/// about the whole, so one bad element is skipped and counted, but an answer that is not a JSON array at all is an
/// error, and the caller keeps the set it had.
public struct BikeList: Sendable {
    public var entries: [Entry]
    /// Elements skipped because a required field was absent or wrong, by reason.
    public var rejected: [Rejection: Int]

    public struct Entry: Hashable, Sendable {
        public var id: String
        /// A fixed beacon's minor (0 for a rotating one, whose `identities` name it).
        public var minor: UInt16
        public var missing: Bool
        public var uuid: BeaconUUIDText?
        public var major: UInt16?
        public var make: String?
        public var model: String?
        public var colour: String?
        /// A rotating beacon's identities in the registry's window (docs/rotating-beacon.md), each `major << 16 |
        /// minor`; empty for a fixed beacon. Each is matched like a fixed beacon, under this one bike.
        public var identities: [UInt32]

        public init(
            id: String, minor: UInt16, missing: Bool, uuid: BeaconUUIDText? = nil, major: UInt16? = nil,
            make: String? = nil, model: String? = nil, colour: String? = nil, identities: [UInt32] = []
        ) {
            self.id = id
            self.minor = minor
            self.missing = missing
            self.uuid = uuid
            self.major = major
            self.make = make
            self.model = model
            self.colour = colour
            self.identities = identities
        }

        /// A rotating beacon's bike: `identities` name it, not `major` and `minor`.
        public var isRotating: Bool { !identities.isEmpty }
    }

    /// The beacon UUID as the registry wrote it; parsed when the entry is placed in a region.
    public typealias BeaconUUIDText = String

    public enum Rejection: String, Hashable, Sendable, CaseIterable {
        case notAnObject = "not an object"
        case badID = "id missing or not a non-empty string"
        case badMinor = "beaconMinor missing or not an integer 0-65535"
        case badMissing = "missing absent or not a boolean"
        case badMajor = "beaconMajor not an integer 0-65535"
        case badUUID = "beaconUUID not a UUID"
        case badIdentities = "beaconIdentities not a non-empty list of [major, minor] pairs 0-65535"
        case tooLarge = "entry larger than 64 KiB"
    }

    public init(entries: [Entry], rejected: [Rejection: Int] = [:]) {
        self.entries = entries
        self.rejected = rejected
    }
}
