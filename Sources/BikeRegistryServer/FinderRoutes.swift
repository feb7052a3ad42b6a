import BikeRegistryCore
import BikeRegistryStore
import DaemonSupport
import Foundation
import HTTPTypes
import Hummingbird

/// "Found a beacon?" (issue 38): anyone who finds a beacon on their things types in what a scanner app shows, and
/// learns only whether a bike is registered with it and whether it is missing; and may report it as placed on them
/// without their consent, which pauses the bike's messages at once until the operator has looked. No credentials;
/// limited per network. The finder's address is used for the limits, in memory, and never kept.
struct FinderRoutes: Sendable {
    let finder: Finder

    var routes: [Route] {
        [
            .get("beacons/:uuid/:major/:minor") { _, context in
                try await lookup(context, address: OwnerRoutes.address(context))
            },
            .post("beacons/:uuid/:major/:minor/abuse") { request, context in
                try await report(request, context, address: OwnerRoutes.address(context))
            },
        ]
    }

    private func lookup(_ context: some RequestContext, address: String) async throws -> Response {
        let beacon = try Self.beacon(context)
        switch try await finder.lookup(beacon, address: address) {
        case .wait(let seconds): throw APIError.tooManyRequests(retryAfter: seconds)
        case .found(let lookup):
            return try JSONBody.response(
                ["registered": lookup.registered, "missing": lookup.missing], headers: [.cacheControl: "no-store"])
        }
    }

    private func report(_ request: Request, _ context: some RequestContext, address: String) async throws -> Response {
        let beacon = try Self.beacon(context)
        let message = try await JSONBody.decode(AbuseBody.self, from: request, emptyAllowed: true)?.message
        switch try await finder.report(beacon, message: message, address: address) {
        case .wait(let seconds): throw APIError.tooManyRequests(retryAfter: seconds)
        case .noBike: throw HTTPError(.notFound, message: "no bike is registered with this beacon")
        case .received:
            return try JSONBody.response(["received": true], status: .accepted, headers: [.cacheControl: "no-store"])
        }
    }

    static func beacon(_ context: some RequestContext) throws -> Finder.Beacon {
        guard
            let beacon = Finder.Beacon(
                uuid: context.parameters.get("uuid") ?? "", major: context.parameters.get("major") ?? "",
                minor: context.parameters.get("minor") ?? "")
        else { throw APIError.badRequest("the beacon is a UUID, a major and a minor (0 to 65535)") }
        return beacon
    }
}

/// `POST /beacons/…/abuse`'s body, which may be empty: an optional `message` from the finder.
struct AbuseBody: Decodable {
    var message: String?

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: AnyKey.self)
        try container.refuseUnknown(["message"])
        let key = AnyKey(stringValue: "message")
        guard container.contains(key) else { return }
        message = try Finder.checkedMessage(try container.decode(String.self, forKey: key))
    }
}

/// The finder's side, shared by the API and the `/found` page so that neither is a way around the other's limits.
struct Finder: Sendable {
    struct Beacon: Sendable {
        var uuid: String
        var major: Int
        var minor: Int

        init?(uuid: String, major: String, minor: String) {
            guard let (uuid, major, minor) = BeaconParser.beacon(uuid: uuid, major: major, minor: minor) else {
                return nil
            }
            self.uuid = uuid
            self.major = major
            self.minor = minor
        }

        /// A rotating beacon, as its bike's row holds it (`RotatingBeaconClaim`).
        init(rotating id: String) {
            uuid = id
            major = RotatingBeaconClaim.major
            minor = RotatingBeaconClaim.minor
        }
    }

    enum Lookup {
        case found(BeaconLookup)
        case wait(seconds: Int)
    }

    enum Report {
        case received
        case noBike
        case wait(seconds: Int)
    }

    let database: any RegistryStore
    /// Lookups per network per minute, under everyone's.
    let lookups: NetworkLimit
    /// Reports per network per day, whatever became of them, under everyone's.
    let reports: NetworkLimit
    let doorbell: Doorbell
    let snapshot: RegistrySnapshot
    let now: @Sendable () -> Date

    func lookup(_ beacon: Beacon, address: String) async throws -> Lookup {
        if let wait = try await lookups.count(ClientNetwork.of(address), now: now()) { return .wait(seconds: wait) }
        let beacon = try await resolved(beacon)
        return .found(try await database.lookupBeacon(uuid: beacon.uuid, major: beacon.major, minor: beacon.minor))
    }

    /// The beacon as the bike table holds it: a missing bike's rotating beacon when the identity typed is one of
    /// the identities the stations are given for it (`RegistrySnapshot.rotatingBeacon`), so that a finder can
    /// report a rotating beacon placed on them as they can a fixed one; otherwise as typed.
    private func resolved(_ beacon: Beacon) async throws -> Beacon {
        guard
            let id = try await snapshot.rotatingBeacon(uuid: beacon.uuid, major: beacon.major, minor: beacon.minor)
        else { return beacon }
        return Beacon(rotating: id)
    }

    func report(_ beacon: Beacon, message: String?, address: String) async throws -> Report {
        let now = now()
        if let wait = try await reports.count(ClientNetwork.of(address), now: now) { return .wait(seconds: wait) }
        let beacon = try await resolved(beacon)
        switch try await database.reportAbuse(
            uuid: beacon.uuid, major: beacon.major, minor: beacon.minor, message: message, now: now)
        {
        case .noBike: return .noBike
        case .recorded(_, let paused):
            if paused { doorbell.ring() }  // the owner's bike.paused
            return .received
        }
    }

    /// A finder's message: at most 1,000 characters; line breaks and tabs kept, other control characters refused.
    static func checkedMessage(_ text: String) throws -> String? {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { return nil }
        guard trimmed.unicodeScalars.count <= 1_000 else { throw FieldError("message is at most 1000 characters") }
        var spaced = String.UnicodeScalarView()
        for scalar in trimmed.unicodeScalars {
            spaced.append([0x09, 0x0A, 0x0D].contains(scalar.value) ? " " : scalar)
        }
        try FieldError.refuseControlCharacters(String(spaced), in: "message")
        return trimmed
    }
}
