public import Foundation

/// A beacon the operator provisioned: its identity, and the hash of the code on its label.
public struct NewBeacon: Sendable, Equatable {
    public var uuid: String
    public var major: Int
    public var minor: Int
    /// `ClaimCode.hash` of the code on its label.
    public var codeHash: String

    public init(uuid: String, major: Int, minor: Int, codeHash: String) {
        self.uuid = uuid.uppercased()
        self.major = major
        self.minor = minor
        self.codeHash = codeHash
    }
}

/// A beacon as `beacons list` shows it.
public struct ProvisionedBeacon: Sendable, Equatable {
    public enum State: String, Sendable {
        /// Made, with a code no bike has used yet, or freed again when its bike was deleted.
        case issued
        /// A bike is registered with it.
        case claimed
        /// Withdrawn by the operator: its code claims nothing.
        case revoked
    }

    public var uuid: String
    public var major: Int
    public var minor: Int
    public var state: State
    /// Nil for a bike registered without a code (before claim codes, or under open registration).
    public var issuedAt: Date?
    public var hasCode: Bool { issuedAt != nil }

    package init(uuid: String, major: Int, minor: Int, state: State, issuedAt: Date? = nil) {
        self.uuid = uuid
        self.major = major
        self.minor = minor
        self.state = state
        self.issuedAt = issuedAt
    }
}

/// The beacon a claim code must name, as far as the owner gave it: each field given must match.
public struct BeaconMatch: Sendable, Equatable {
    public var uuid: String?
    public var major: Int?
    public var minor: Int?

    public init(uuid: String? = nil, major: Int? = nil, minor: Int? = nil) {
        self.uuid = uuid?.uppercased()
        self.major = major
        self.minor = minor
    }

    package func accepts(uuid: String, major: Int, minor: Int) -> Bool {
        (self.uuid ?? uuid) == uuid && (self.major ?? major) == major && (self.minor ?? minor) == minor
    }
}

/// The bike an owner describes when claiming a beacon by its code.
public struct BikeDescription: Sendable {
    public var make: String
    public var model: String
    public var colour: String

    public init(make: String, model: String, colour: String) {
        self.make = make
        self.model = model
        self.colour = colour
    }
}
