import BikeRegistryCore
import BikeRegistryStore
import Foundation
import HTTPTypes
import Hummingbird

/// The owner side: register a bike (no credentials; rate-limited per address), then, with the owner token as
/// `Authorization: Bearer`, read, change or delete that one bike and read its sightings.
struct OwnerRoutes: Sendable {
    /// Registration's rules and limits, shared with the page's.
    let registrar: Registrar
    /// The owner's rules, shared with the pages'.
    let owners: OwnerService

    var routes: [Route] {
        [
            .post("owner/bikes") { request, context in try await register(request, address: Self.address(context)) },
            .get("owner/bikes/:id") { request, context in try await show(request, context) },
            .patch("owner/bikes/:id") { request, context in try await change(request, context) },
            .delete("owner/bikes/:id") { request, context in try await delete(request, context) },
            .get("owner/bikes/:id/sightings") { request, context in try await sightings(request, context) },
        ]
    }

    static func address(_ context: some RemoteAddressRequestContext) -> String {
        context.remoteAddress?.ipAddress ?? "unknown"
    }

    private func register(_ request: Request, address: String) async throws -> Response {
        let body = try await JSONBody.decode(RegistrationBody.self, from: request)
        switch try await registrar.register(body.request, address: address) {
        case .wait(let seconds): throw APIError.tooManyRequests(retryAfter: seconds)
        case .incomplete(let reason): throw APIError.badRequest(reason)
        case .refused: throw HTTPError(.forbidden, message: Registrar.refusal)
        case .taken:
            throw HTTPError(
                .conflict,
                message:
                    "this beacon (uuid, major, minor) is registered already, or is provisioned and registers only with its claim code"
            )
        case .registered(let registration):
            return try JSONBody.response(
                RegistrationAnswer(
                    id: registration.bike.id, ownerToken: registration.ownerToken,
                    webhookSecret: registration.webhookSecret,
                    bike: OwnerBike(registration.bike, channels: owners.channels)),
                status: .created,
                headers: [.location: "/owner/bikes/\(registration.bike.id)", .cacheControl: "no-store"])
        }
    }

    /// The bike this request's token owns, by the path's id. 401 when the token is no owner's (no token, a station
    /// key, a deleted bike's); 404 when it is another bike's owner's, so ids cannot be probed.
    private func ownedBike(_ request: Request, _ context: some RequestContext) async throws -> (Bike, token: String) {
        guard let token = request.headers[.authorization].flatMap(StationRoutes.bearer), !token.isEmpty else {
            throw APIError.unauthorized("the owner token is required as Authorization: Bearer")
        }
        switch try await owners.owned(id: context.parameters.get("id") ?? "", token: token) {
        case .bike(let bike): return (bike, token)
        case .wait(let seconds): throw APIError.tooManyRequests(retryAfter: seconds)
        case .none(let ownerToken):
            guard ownerToken else { throw APIError.unauthorized("not an owner token") }
            throw APIError.notFound
        }
    }

    private func show(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let (bike, _) = try await ownedBike(request, context)
        return try await answer(bike)
    }

    /// The bike as its owner sees it, with its open report.
    private func answer(_ bike: Bike) async throws -> Response {
        try JSONBody.response(
            OwnerBike(bike, report: try await owners.openReport(bike), channels: owners.channels),
            headers: [.cacheControl: "no-store"])
    }

    private func change(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let (bike, token) = try await ownedBike(request, context)
        let body = try await JSONBody.decode(ChangeBody.self, from: request)
        let change: OwnerService.Change
        do {
            change = try body.change(channels: owners.channels)
        } catch let error as FieldError {
            throw APIError.badRequest(error.reason)
        }
        switch try await owners.change(bike, token: token, change) {
        case .notOwner: throw APIError.notFound
        case .noOpenReport: throw HTTPError(.conflict, message: "the bike has no open missing report")
        case .tooManyReports(let next, let now): throw APIError.tooManyReports(next: next, now: now)
        case .targetRefused(let field, let reason): throw APIError.badRequest("notify.\(field): \(reason)")
        case .updated(let changed): return try await answer(changed)
        }
    }

    private func delete(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let (bike, token) = try await ownedBike(request, context)
        guard try await owners.delete(bike, token: token) else { throw APIError.notFound }
        return Response(status: .noContent)
    }

    private func sightings(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let (bike, _) = try await ownedBike(request, context)
        let sightings = try await owners.sightings(bike, limit: 1000)
        return try JSONBody.response(
            SightingsAnswer(
                bikeId: bike.id, stationsListeningLastHour: try await owners.stationsListening(),
                sightings: sightings.map {
                    SightingsAnswer.Item(
                        kind: $0.kind, seenAt: $0.seenAt, firstSeen: $0.firstSeen, lastSeen: $0.lastSeen,
                        station: $0.station,
                        proximity: $0.proximity, rssi: $0.rssi, visitId: $0.visitId,
                        timesAsReceived: $0.timesAsReceived)
                }),
            headers: [.cacheControl: "no-store"])
    }
}

/// `POST /owner/bikes`'s body: `claimCode` (the code on the beacon's label) or, under open registration, `uuid`,
/// `major` and `minor`; with a code, any of those given must match its beacon. Then `make`, `model`, `colour`.
struct RegistrationBody: Decodable {
    var request: RegistrationRequest

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: AnyKey.self)
        try container.refuseUnknown(["claimCode", "uuid", "major", "minor", "make", "model", "colour"])
        func text(_ name: String) throws -> String {
            try container.decode(String.self, forKey: AnyKey(stringValue: name))
        }
        // Absent is nil; present must be the type (null is not one).
        func optional<Value: Decodable>(_ name: String, _ type: Value.Type) throws -> Value? {
            let key = AnyKey(stringValue: name)
            return container.contains(key) ? try container.decode(type, forKey: key) : nil
        }
        func optionalText(_ name: String) throws -> String? { try optional(name, String.self) }
        func number(_ name: String) throws -> Int? { try optional(name, Int.self) }
        request = try NewBikeFields.checked(
            claimCode: try optionalText("claimCode"), uuid: try optionalText("uuid"), major: try number("major"),
            minor: try number("minor"), make: try text("make"), model: try text("model"), colour: try text("colour"))
    }
}

/// A new bike's fields as the API and the registration page both check them.
enum NewBikeFields {
    static func checked(
        claimCode: String?, uuid: String?, major: Int?, minor: Int?, make: String, model: String, colour: String
    ) throws -> RegistrationRequest {
        func text(_ value: String, _ name: String) throws -> String {
            // Counted in code points, as JSON Schema's maxLength counts.
            guard (1...100).contains(value.unicodeScalars.count) else {
                throw FieldError("\(name) is 1 to 100 characters")
            }
            try FieldError.refuseControlCharacters(value, in: name)
            return value
        }
        func number(_ value: Int?, _ name: String) throws -> Int? {
            guard let value else { return nil }
            guard let number = BeaconParser.number(value) else { throw FieldError("\(name) is 0 to 65535") }
            return number
        }
        if let claimCode, claimCode.unicodeScalars.count > 64 {
            throw FieldError("claimCode is at most 64 characters")
        }
        var checkedUUID: String?
        if let uuid {
            guard let parsed = BeaconParser.uuid(uuid) else { throw FieldError("uuid is not a UUID") }
            checkedUUID = parsed
        }
        return RegistrationRequest(
            claimCode: claimCode,
            beacon: BeaconMatch(
                uuid: checkedUUID, major: try number(major, "major"), minor: try number(minor, "minor")),
            bike: BikeDescription(
                make: try text(make, "make"), model: try text(model, "model"), colour: try text(colour, "colour")))
    }
}

/// `PATCH /owner/bikes/{id}`'s body: `missing` (with `report`'s details when true, `outcome` when false), `renew`,
/// and `notify` with a target on each channel (`webhook`, `ntfy`, `email`: a URL or an address, or null to stop).
struct ChangeBody: Decodable {
    var report = BikeChange()
    /// `notify`'s fields as given, in order: each a text, or nil (null) to remove.
    var notify: [(field: String, value: String?)] = []

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: AnyKey.self)
        try container.refuseUnknown(["missing", "report", "renew", "outcome", "notify"])
        // Present means a boolean: null is not one.
        let missing = AnyKey(stringValue: "missing")
        if container.contains(missing) { report.missing = try container.decode(Bool.self, forKey: missing) }
        let renew = AnyKey(stringValue: "renew")
        if container.contains(renew) { report.renew = try container.decode(Bool.self, forKey: renew) }
        let outcome = AnyKey(stringValue: "outcome")
        if container.contains(outcome) {
            let text = try container.decode(String.self, forKey: outcome)
            guard report.missing == false, let chosen = MissingReport.Outcome(rawValue: text), chosen != .lapsed else {
                throw FieldError("outcome is recovered or withdrawn, with missing: false")
            }
            report.outcome = chosen
        }
        let details = AnyKey(stringValue: "report")
        if container.contains(details) {
            guard report.missing != false else { throw FieldError("report goes with missing: true, or alone") }
            report.report = try ReportFields.decode(
                try container.nestedContainer(keyedBy: AnyKey.self, forKey: details))
        }
        let notifyKey = AnyKey(stringValue: "notify")
        guard container.contains(notifyKey) else { return }
        let notify = try container.nestedContainer(keyedBy: AnyKey.self, forKey: notifyKey)
        for key in notify.allKeys.sorted(by: { $0.stringValue < $1.stringValue }) {
            self.notify.append(
                (key.stringValue, try notify.decodeNil(forKey: key) ? nil : try notify.decode(String.self, forKey: key))
            )
        }
    }

    /// The change, each target checked by its channel's shape: a field no channel has, or a target of the wrong
    /// shape, is refused.
    func change(channels: NotificationChannels) throws -> OwnerService.Change {
        var change = OwnerService.Change(report: report)
        let fields = Dictionary(uniqueKeysWithValues: channels.all.map { ($0.field, $0) })
        for (field, value) in notify {
            guard let channel = fields[field] else { throw FieldError("\(field) is not a field of this request") }
            if let value, value.utf8.count > 2048 { throw FieldError("notify.\(field) is longer than 2048 bytes") }
            // `.some`: assigning nil alone would take the channel out of the change rather than remove its target.
            change.targets[channel.id] = .some(try value.map { try channel.parsed($0).get() })
        }
        return change
    }
}

/// A missing report's details, as the API and the page both check them: each optional, texts of 1 to 200
/// characters with no control character.
enum ReportFields {
    static let texts = ["lastSeenPlace", "policeReference", "policeForce"]

    static func decode(_ container: KeyedDecodingContainer<AnyKey>) throws -> MissingReportDetails {
        try container.refuseUnknown(Set(texts + ["lastSeenAt"]))
        var values: [String: String] = [:]
        for name in texts where container.contains(AnyKey(stringValue: name)) {
            values[name] = try container.decode(String.self, forKey: AnyKey(stringValue: name))
        }
        let lastSeenAt =
            container.contains(AnyKey(stringValue: "lastSeenAt")) ? try container.time("lastSeenAt") : nil
        return try checked(values, lastSeenAt: lastSeenAt)
    }

    static func checked(_ values: [String: String], lastSeenAt: Date?) throws -> MissingReportDetails {
        for (name, value) in values {
            guard (1...200).contains(value.unicodeScalars.count) else {
                throw FieldError("report.\(name) is 1 to 200 characters")
            }
            try FieldError.refuseControlCharacters(value, in: "report.\(name)")
        }
        return MissingReportDetails(
            lastSeenAt: lastSeenAt, lastSeenPlace: values["lastSeenPlace"],
            policeReference: values["policeReference"], policeForce: values["policeForce"])
    }
}

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
