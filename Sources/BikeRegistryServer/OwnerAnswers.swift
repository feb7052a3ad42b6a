import BikeRegistryCore
import BikeRegistryStore
import Foundation
import HTTPTypes
import Hummingbird

/// A bike as its owner sees it.
struct OwnerBike: Encodable {
    /// Each channel's target, by its field: every channel's is there, null when the bike has none.
    struct Notify: Encodable {
        var targets: [NotificationTarget]
        var channels: NotificationChannels

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: AnyKey.self)
            for channel in channels.all {
                try channel.encode(targets.first { $0.channel == channel.id }, into: &container)
            }
        }
    }

    var id: String
    var uuid: String
    var major: Int
    var minor: Int
    /// A rotating beacon's id (docs/rotating-beacon.md); its bike then has no lasting UUID, major or minor, and
    /// those three are null.
    var rotatingBeacon: String?
    var make: String
    var model: String
    var colour: String
    var missing: Bool
    /// The open report, or null.
    var report: Report?
    var notify: Notify
    var createdAt: Date

    /// A missing report as its owner sees it.
    struct Report: Encodable {
        var madeAt: Date
        var renewedAt: Date
        var lapsesAt: Date?
        var lastSeenAt: Date?
        var lastSeenPlace: String?
        var policeReference: String?
        var policeForce: String?

        init(_ report: MissingReport) {
            madeAt = report.madeAt
            renewedAt = report.renewedAt
            lapsesAt = report.lapsesAt
            lastSeenAt = report.details.lastSeenAt
            lastSeenPlace = report.details.lastSeenPlace
            policeReference = report.details.policeReference
            policeForce = report.details.policeForce
        }
    }

    init(_ bike: Bike, report: MissingReport? = nil, channels: NotificationChannels) {
        id = bike.id
        uuid = bike.uuid
        major = bike.major
        minor = bike.minor
        rotatingBeacon = bike.rotatingBeaconID
        make = bike.make
        model = bike.model
        colour = bike.colour
        missing = bike.missing
        notify = Notify(targets: bike.targets, channels: channels)
        createdAt = bike.createdAt
        self.report = report.map(Report.init)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: AnyKey.self)
        func put(_ value: some Encodable, _ name: String) throws {
            try container.encode(value, forKey: AnyKey(stringValue: name))
        }
        try put(id, "id")
        try put(rotatingBeacon == nil ? uuid : nil, "uuid")
        try put(rotatingBeacon == nil ? major : nil, "major")
        try put(rotatingBeacon == nil ? minor : nil, "minor")
        try put(rotatingBeacon, "rotatingBeacon")
        try put(make, "make")
        try put(model, "model")
        try put(colour, "colour")
        try put(missing, "missing")
        try put(report, "report")  // null when there is none: the field is always there
        try put(notify, "notify")
        try put(createdAt, "createdAt")
    }
}

struct RegistrationAnswer: Encodable {
    var id: String
    var ownerToken: String
    var webhookSecret: String
    var bike: OwnerBike
}

struct SightingsAnswer: Encodable {
    struct Item: Encodable {
        var kind: String
        var seenAt: Date
        var firstSeen: Date
        var lastSeen: Date
        var station: NotificationPayload.StationPlace
        var proximity: String
        var rssi: Double?
        var visitId: String
        /// The station's clock was wrong: the times are when the registry received the sighting.
        var timesAsReceived: Bool
    }

    var bikeId: String
    /// Stations that refreshed the missing list in the last hour: how many were listening.
    var stationsListeningLastHour: Int
    var sightings: [Item]
}
