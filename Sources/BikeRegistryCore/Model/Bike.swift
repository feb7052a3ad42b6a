public import Foundation

/// A bike as its owner registered it. Its owner token's hash never leaves the store.
public struct Bike: Sendable, Equatable {
    public var id: String
    public var uuid: String
    public var major: Int
    public var minor: Int
    public var make: String
    public var model: String
    public var colour: String
    public var missing: Bool
    public var createdAt: Date
    /// The `whsec_` secret its webhook messages are signed with: the owner was shown it once, at registration; the
    /// server needs it to sign (a message, or the owner page's test).
    public var webhookSecret: String
    /// A finder reported its beacon as placed on them: its sightings tell its owner nothing until the operator
    /// restores it.
    public var paused = false
    /// Where its messages go, one target a channel at most, in no particular order.
    public var targets: [NotificationTarget] = []

    /// Its beacon is a rotating one (docs/rotating-beacon.md): `uuid` is then the beacon's id (`rbn_…`), and `major`
    /// and `minor` are `RotatingBeaconClaim.major` and `.minor`, which no iBeacon advertises.
    public var isRotating: Bool { major < 0 }
    /// The rotating beacon's id (`rbn_…`); nil for a fixed beacon.
    public var rotatingBeaconID: String? { isRotating ? uuid : nil }

    /// Its target on `channel`, whatever its state.
    public func saved(on channel: NotificationChannel) -> NotificationTarget? {
        targets.first { $0.channel == channel }
    }

    /// Where a message on `channel` goes; nil when the bike has no target there, or one not confirmed.
    public func target(on channel: NotificationChannel) -> String? {
        saved(on: channel).flatMap { $0.state == .confirmed ? $0.address : nil }
    }

    /// The owner's address for e-mail, and whether it is confirmed.
    public var email: OwnerEmail? { saved(on: .email).flatMap(OwnerEmail.init) }

    package init(
        id: String, uuid: String, major: Int, minor: Int, make: String, model: String, colour: String, missing: Bool,
        createdAt: Date, webhookSecret: String, paused: Bool = false, targets: [NotificationTarget] = []
    ) {
        self.id = id
        self.uuid = uuid
        self.major = major
        self.minor = minor
        self.make = make
        self.model = model
        self.colour = colour
        self.missing = missing
        self.createdAt = createdAt
        self.webhookSecret = webhookSecret
        self.paused = paused
        self.targets = targets
    }
}

/// What an owner registers.
public struct NewBike: Sendable {
    public var uuid: String
    public var major: Int
    public var minor: Int
    public var make: String
    public var model: String
    public var colour: String

    public init(uuid: String, major: Int, minor: Int, make: String, model: String, colour: String) {
        self.uuid = uuid
        self.major = major
        self.minor = minor
        self.make = make
        self.model = model
        self.colour = colour
    }
}

/// The registration's answer: the two secrets are shown this once.
public struct Registration: Sendable {
    public var bike: Bike
    public var ownerToken: String
    public var webhookSecret: String
}

/// A change an owner asks for; nil leaves a field as it is.
public struct BikeChange: Sendable {
    /// True makes a report (or, with one open, changes nothing but what `report` and `renew` ask); false closes it.
    public var missing: Bool?
    /// The report's details: with `missing: true`, or alone for the open report.
    public var report: MissingReportDetails?
    /// Renews the open report: its lapse counts from now.
    public var renew = false
    /// How a closed report ended (with `missing: false`; recovered when not said).
    public var outcome: MissingReport.Outcome?
    /// Targets to save, confirmed, on channels that need no confirmation; nil removes the channel's target. A
    /// channel not named is left as it is.
    public var targets: [NotificationChannel: String?] = [:]

    public init(
        missing: Bool? = nil, report: MissingReportDetails? = nil, renew: Bool = false,
        outcome: MissingReport.Outcome? = nil, targets: [NotificationChannel: String?] = [:]
    ) {
        self.missing = missing
        self.report = report
        self.renew = renew
        self.outcome = outcome
        self.targets = targets
    }
}

/// What a station needs to match a missing bike, and to let café staff recognise it. No owner data.
public struct MissingBike: Sendable, Equatable {
    public var id: String
    public var uuid: String
    public var major: Int
    public var minor: Int
    public var make: String
    public var model: String
    public var colour: String
    /// The bike's rotating beacon, its key still sealed; nil for a fixed beacon's bike.
    public var rotating: SealedRotatingBeacon?

    public init(
        id: String, uuid: String, major: Int, minor: Int, make: String, model: String, colour: String,
        rotating: SealedRotatingBeacon? = nil
    ) {
        self.id = id
        self.uuid = uuid
        self.major = major
        self.minor = minor
        self.make = make
        self.model = model
        self.colour = colour
        self.rotating = rotating
    }
}

public enum RegisterOutcome: Sendable {
    case registered(Registration)
    /// Another bike has this beacon (UUID, major, minor), or (open registration) it is a provisioned beacon, which
    /// only its claim code registers.
    case beaconTaken
    /// The claim code names no beacon that may be claimed: none, a claimed one, a revoked one, or one other than the
    /// UUID, major or minor given. One answer for all, so that nobody learns which beacons exist.
    case claimRefused
}

/// A registration's new values, made once whichever store keeps them.
package struct NewBikeRecord {
    package var id = Secrets.newID(prefix: "bike_")
    package var ownerToken = Secrets.newOwnerToken()
    package var webhookSecret = Secrets.newWebhookSecret()
    package var bike: NewBike

    package init(_ bike: NewBike) {
        self.bike = bike
        // A rotating beacon's bike holds the beacon's id there, which is not a UUID.
        if bike.major >= 0 { self.bike.uuid = bike.uuid.uppercased() }
    }

    package func registration(createdAt: Date) -> Registration {
        Registration(
            bike: Bike(
                id: id, uuid: bike.uuid, major: bike.major, minor: bike.minor, make: bike.make, model: bike.model,
                colour: bike.colour,
                missing: false, createdAt: createdAt, webhookSecret: webhookSecret),
            ownerToken: ownerToken, webhookSecret: webhookSecret)
    }
}
