public import Foundation

/// A finder's report that a beacon was placed on them without their consent (issue 38's "found a beacon?"). The
/// bike's messages pause at once; the operator ends the report by restoring them or removing the bike. Neither the
/// finder's address nor anything else of theirs is kept, only what they chose to write.
public struct AbuseReport: Sendable, Equatable {
    public enum Resolution: String, Sendable {
        /// The operator found the bike's owner in the right: messages resume.
        case restored
        /// The operator removed the bike and revoked its beacon.
        case removed
    }

    public var id: String
    public var bikeId: String
    public var uuid: String
    public var major: Int
    public var minor: Int
    public var message: String?
    public var madeAt: Date
    public var resolvedAt: Date?
    public var resolution: Resolution?

    public init(
        id: String, bikeId: String, uuid: String, major: Int, minor: Int, message: String?, madeAt: Date,
        resolvedAt: Date?, resolution: Resolution?
    ) {
        self.id = id
        self.bikeId = bikeId
        self.uuid = uuid
        self.major = major
        self.minor = minor
        self.message = message
        self.madeAt = madeAt
        self.resolvedAt = resolvedAt
        self.resolution = resolution
    }
}

/// What a finder learns of a beacon: whether a bike is registered with it, and whether it is missing. Nothing else.
public struct BeaconLookup: Sendable, Equatable {
    public var registered: Bool
    public var missing: Bool

    public init(registered: Bool, missing: Bool) {
        self.registered = registered
        self.missing = missing
    }
}

public enum AbuseOutcome: Sendable, Equatable {
    /// No bike is registered with that beacon: nothing was kept.
    case noBike
    /// Kept; `paused` when this report paused the bike's messages (it was not paused already).
    case recorded(id: String, paused: Bool)
}
