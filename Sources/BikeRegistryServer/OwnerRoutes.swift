import BikeRegistryCore
import BikeRegistryMail
import BikeRegistryStore
import Foundation
import HTTPTypes
import Hummingbird

/// The owner side: register a bike (no credentials; rate-limited per address), then, with the owner token as
/// `Authorization: Bearer`, read, change or delete that one bike and read its sightings.
struct OwnerRoutes: Sendable {
    let database: any RegistryStore
    /// Registration's rules and limits, shared with the page's.
    let registrar: Registrar
    /// By owner token's hash.
    let requests: RateLimiter<String>
    let targets: NotificationTargetPolicy
    let snapshot: RegistrySnapshot
    let reports: MissingReportRules
    let emails: EmailChanges
    let now: @Sendable () -> Date

    func add<Context: RemoteAddressRequestContext>(to router: Router<Context>) {
        router.post("owner/bikes") { request, context in try await register(request, address: Self.address(context)) }
        router.get("owner/bikes/:id") { request, context in try await show(request, context) }
        router.patch("owner/bikes/:id") { request, context in try await change(request, context) }
        router.delete("owner/bikes/:id") { request, context in try await delete(request, context) }
        router.get("owner/bikes/:id/sightings") { request, context in try await sightings(request, context) }
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
                    bike: OwnerBike(registration.bike)),
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
        if let wait = requests.retryAfter(Secrets.hash(token)) { throw APIError.tooManyRequests(retryAfter: wait) }
        let id = context.parameters.get("id") ?? ""
        if let bike = try await database.bike(id: id, ownerToken: token) { return (bike, token) }
        guard try await database.isOwnerToken(token) else { throw APIError.unauthorized("not an owner token") }
        throw APIError.notFound
    }

    private func show(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let (bike, _) = try await ownedBike(request, context)
        return try await answer(bike)
    }

    /// The bike as its owner sees it, with its open report.
    private func answer(_ bike: Bike) async throws -> Response {
        let report = bike.missing ? try await database.openReport(bikeId: bike.id) : nil
        return try JSONBody.response(OwnerBike(bike, report: report), headers: [.cacheControl: "no-store"])
    }

    private func change(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let (bike, token) = try await ownedBike(request, context)
        let body = try await JSONBody.decode(ChangeBody.self, from: request)
        for case (let name, let url??) in [("webhook", body.change.webhookURL), ("ntfy", body.change.ntfyURL)] {
            if let refusal = await targets.refusal(for: url) { throw APIError.badRequest("notify.\(name): \(refusal)") }
        }
        let now = now()
        if let email = body.email {
            try await emails.change(bikeId: bike.id, ownerToken: token, to: email, now: now)
        }
        switch try await database.update(id: bike.id, ownerToken: token, body.change, rules: reports, now: now) {
        case .notOwner: throw APIError.notFound
        case .noOpenReport: throw HTTPError(.conflict, message: "the bike has no open missing report")
        case .tooManyReports(let next):
            throw APIError.tooManyReports(next: next, now: now)
        case .updated(let changed):
            if changed.missing != bike.missing { try await snapshot.listChanged() }
            return try await answer(changed)
        }
    }

    private func delete(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let (bike, token) = try await ownedBike(request, context)
        guard try await database.delete(id: bike.id, ownerToken: token) else { throw APIError.notFound }
        if bike.missing { try await snapshot.listChanged() }
        return Response(status: .noContent)
    }

    private func sightings(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let (bike, _) = try await ownedBike(request, context)
        let sightings = try await database.sightings(bikeId: bike.id)
        let listening = try await database.stationsRefreshed(since: Date().addingTimeInterval(-3600))
        return try JSONBody.response(
            SightingsAnswer(
                bikeId: bike.id, stationsListeningLastHour: listening,
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
            guard (0...65535).contains(value) else { throw FieldError("\(name) is 0 to 65535") }
            return value
        }
        if let claimCode, claimCode.unicodeScalars.count > 64 {
            throw FieldError("claimCode is at most 64 characters")
        }
        var checkedUUID: String?
        if let uuid {
            guard let parsed = UUID(uuidString: uuid) else { throw FieldError("uuid is not a UUID") }
            checkedUUID = parsed.uuidString
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
/// and `notify` with `webhook` and `ntfy` (a URL, or null to stop).
struct ChangeBody: Decodable {
    var change = BikeChange()
    /// `notify.email`: an address (checked), null to remove it, or absent (nil) to leave it.
    var email: MailAddress??

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: AnyKey.self)
        try container.refuseUnknown(["missing", "report", "renew", "outcome", "notify"])
        // Present means a boolean: null is not one.
        let missing = AnyKey(stringValue: "missing")
        if container.contains(missing) { change.missing = try container.decode(Bool.self, forKey: missing) }
        let renew = AnyKey(stringValue: "renew")
        if container.contains(renew) { change.renew = try container.decode(Bool.self, forKey: renew) }
        let outcome = AnyKey(stringValue: "outcome")
        if container.contains(outcome) {
            let text = try container.decode(String.self, forKey: outcome)
            guard change.missing == false, let chosen = MissingReport.Outcome(rawValue: text), chosen != .lapsed else {
                throw FieldError("outcome is recovered or withdrawn, with missing: false")
            }
            change.outcome = chosen
        }
        let report = AnyKey(stringValue: "report")
        if container.contains(report) {
            guard change.missing != false else { throw FieldError("report goes with missing: true, or alone") }
            change.report = try ReportFields.decode(try container.nestedContainer(keyedBy: AnyKey.self, forKey: report))
        }
        let notifyKey = AnyKey(stringValue: "notify")
        guard container.contains(notifyKey) else { return }
        let notify = try container.nestedContainer(keyedBy: AnyKey.self, forKey: notifyKey)
        try notify.refuseUnknown(["webhook", "ntfy", "email"])
        func target(_ name: String) throws -> String?? {
            let key = AnyKey(stringValue: name)
            guard notify.contains(key) else { return .none }
            if try notify.decodeNil(forKey: key) { return .some(nil) }
            let url = try notify.decode(String.self, forKey: key)
            guard url.utf8.count <= 2048 else { throw FieldError("notify.\(name) is longer than 2048 bytes") }
            return .some(url)
        }
        change.webhookURL = try target("webhook")
        change.ntfyURL = try target("ntfy")
        email = try target("email").map { typed in
            try typed.map { typed in
                guard let address = MailAddress(typed) else { throw FieldError(EmailChanges.badAddress) }
                return address
            }
        }
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
    struct Notify: Encodable {
        var webhook: String?
        var ntfy: String?
        var email: Email?

        /// The address and where it stands; never its keys.
        struct Email: Encodable {
            var address: String
            var status: String
            var failure: String?
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: AnyKey.self)
            try container.encode(webhook, forKey: AnyKey(stringValue: "webhook"))
            try container.encode(ntfy, forKey: AnyKey(stringValue: "ntfy"))
            try container.encode(email, forKey: AnyKey(stringValue: "email"))
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

    init(_ bike: Bike, report: MissingReport? = nil) {
        id = bike.id
        uuid = bike.uuid
        major = bike.major
        minor = bike.minor
        rotatingBeacon = bike.rotatingBeaconID
        make = bike.make
        model = bike.model
        colour = bike.colour
        missing = bike.missing
        notify = Notify(
            webhook: bike.webhookURL, ntfy: bike.ntfyURL,
            email: bike.email.map { .init(address: $0.address, status: $0.state.rawValue, failure: $0.failure) })
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
