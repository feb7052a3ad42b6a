import BikeRegistryCore
import BikeRegistryStore
import Foundation

/// What each page's template shows, as Mustache reads it (stored properties by name; a false, nil or empty value
/// hides a section).
struct RegisterView: Sendable {
    var csrf: String
    /// Open registration: the beacon's numbers may be typed instead of its claim code.
    var open: Bool
    var claimCode = ""
    var uuid: String
    var major: String
    var minor = ""
    var make = ""
    var model = ""
    var colour = ""
    var error: String?
}

struct RegisteredView: Sendable {
    var heading: String
    /// The page's path, with the token: `/my/<id>/<token>`.
    var path: String
    /// The same as a whole address, to save.
    var link: String
    var webhookSecret: String?
}

struct BikeView: Sendable {
    struct SightingRow: Sendable {
        var iso: String
        var utc: String
        var what: String
        var cafe: String
        var proximity: String
        var latitude: String
        var longitude: String
        /// The station's clock was wrong, and the time shown is when the registry received it.
        var asReceived: Bool
    }

    struct TargetField: Sendable {
        var field: String
        var label: String
        var value: String
    }

    struct TestResult: Sendable {
        var channel: String
        var target: String
        var outcome: String
        var sent: String
    }

    /// The open missing report, as the page shows it.
    struct ReportView: Sendable {
        var made: String
        var lapses: String?
        var lapsesISO: String?
        var lastSeenPlace: String?
        var policeReference: String?
        var policeForce: String?

        init(_ report: MissingReport) {
            made = ISOTime.readable(report.madeAt)
            lapses = report.lapsesAt.map(ISOTime.readable)
            lapsesISO = report.lapsesAt.map(ISOTime.format)
            lastSeenPlace = report.details.lastSeenPlace
            policeReference = report.details.policeReference
            policeForce = report.details.policeForce
        }
    }

    var report: ReportView?
    var path: String
    var csrf: String
    /// Shown as it is (`{{bike.make}}`…); its targets, optional, as the fields below.
    var bike: Bike
    /// A rotating beacon's id; nil for a fixed beacon, shown by its UUID, major and minor.
    var rotatingBeacon: String?
    /// A field for each channel whose target is saved as given, with the bike's target there.
    var targetFields: [TargetField]
    /// Whether the registry sends e-mail; the address and where it stands.
    var mailOn = false
    var email: String
    var emailStatus: String?
    var emailFailing: Bool
    var error: String?
    var tests: [TestResult] = []
    var sightings: [SightingRow]
    var hasSightings: Bool
    var more: Bool
    var shown: Int

    init(
        bike: Bike, path: String, csrf: String, sightings: [OwnerSighting], limit: Int, channels: NotificationChannels
    ) {
        self.path = path
        self.csrf = csrf
        self.bike = bike
        rotatingBeacon = bike.rotatingBeaconID
        targetFields = channels.direct.map { channel in
            TargetField(field: channel.field, label: channel.label, value: bike.saved(on: channel.id)?.address ?? "")
        }
        email = bike.email?.address ?? ""
        emailFailing = bike.email?.state == .failing
        emailStatus = bike.email.map { email in
            switch email.state {
            case .unconfirmed:
                "Not confirmed yet: open the link in the message sent to this address. Nothing else is sent to it until then."
            case .confirmed: "Confirmed: every message about the bike goes to this address too."
            case .failing:
                "Failing: the mail relay refused a message to this address (\(email.failure ?? "no reason given")). "
                    + "Nothing more is sent to it until it is saved again."
            }
        }
        self.sightings = Self.rows(sightings, limit: limit)
        hasSightings = !sightings.isEmpty
        more = sightings.count > limit
        shown = limit
    }

    /// The newest `limit` sightings as the pages list them.
    static func rows(_ sightings: [OwnerSighting], limit: Int) -> [SightingRow] {
        sightings.prefix(limit).map { sighting in
            SightingRow(
                iso: ISOTime.format(sighting.seenAt),
                utc: ISOTime.readable(sighting.seenAt),
                what: sighting.kind == "exit" ? "Last heard" : "Heard",
                cafe: sighting.station.name, proximity: sighting.proximity,
                latitude: String(format: "%.5f", sighting.station.latitude),
                longitude: String(format: "%.5f", sighting.station.longitude), asReceived: sighting.timesAsReceived)
        }
    }
}

/// `/seen/<key>`: the sightings of a bike for the reader of its messages, in their own time zone, read-only, by the
/// key its address's messages carry (the bike's private link is not the registry's to send: it keeps only its hash).
struct SeenView: Sendable {
    var heading: String
    var sightings: [BikeView.SightingRow]
    var hasSightings: Bool
    var more: Bool
    var shown: Int
    var unsubscribe: String
}

/// A page with one button, for a link in a message: opening the link shows it, and only the button acts, so a mail
/// scanner that fetches every link confirms or unsubscribes nothing.
struct MailLinkView: Sendable {
    var heading: String
    var text: String
    var action: String
    var button: String
}

struct MessageView: Sendable {
    var heading: String
    var text: String
    var back: String
    var backText: String
}
