import BikeRegistryCore
import BikeRegistryStore
import Foundation

/// How owners may register a bike (`serve --registration`).
public enum RegistrationMode: String, Sendable, CaseIterable {
    /// Only by the claim code on a provisioned beacon's label (the default): nobody can register a beacon they
    /// merely overheard.
    case claimCode = "claim-code"
    /// Also by the beacon's UUID, major and minor, first come first served: for a closed club that hands beacons out
    /// in person. Anyone who overhears a beacon that is not registered yet can register it.
    case open
}

/// What an owner sent to register a bike, from the API or the page.
struct RegistrationRequest: Sendable {
    /// As typed; nil when none was given (an empty one given is a code that claims nothing).
    var claimCode: String?
    /// The beacon as the owner gave it: with a code, each field given must match; without, all three are needed.
    var beacon: BeaconMatch
    var bike: BikeDescription
}

/// Registration's rules, shared by the API and the page so that neither is a way around the other: the
/// per-network and total limits, the claim code (or, under open registration, the beacon itself), and the count
/// of wrong codes.
struct Registrar: Sendable {
    enum Outcome {
        case registered(Registration)
        /// Open registration: a bike holds this beacon, or it is provisioned and only its code registers it.
        case taken
        /// The code claims nothing: one answer whatever the reason.
        case refused
        case wait(seconds: Int)
        /// Registration is by claim code and none was given, or (open) the beacon is incomplete.
        case incomplete(String)
    }

    /// The one answer to a code that claims nothing, whichever reason: no such beacon, a claimed one, a revoked one,
    /// or one other than the UUID, major or minor given.
    static let refusal =
        "this claim code registers no beacon: check it against the beacon's label (a beacon whose bike is registered is freed when that bike is deleted)"

    let database: any RegistryStore
    let mode: RegistrationMode
    /// Registrations per network, under everyone's.
    let limits: NetworkLimit
    /// Codes that claimed nothing, per network: checked before a claim, counted after one that fails.
    let wrongCodes: NetworkLimit
    let now: @Sendable () -> Date

    func register(_ request: RegistrationRequest, address: String) async throws -> Outcome {
        let network = ClientNetwork.of(address)
        if let wait = try await limits.count(network, now: now()) { return .wait(seconds: wait) }
        if let wait = try await wrongCodes.check(network, now: now()) { return .wait(seconds: wait) }
        if let code = request.claimCode {
            return try await claim(code: code, request, network: network)
        }
        guard mode == .open else {
            return .incomplete("claim_code is required: the code printed on the beacon's label")
        }
        guard let uuid = request.beacon.uuid, let major = request.beacon.major, let minor = request.beacon.minor else {
            return .incomplete("give the beacon's claim code, or its uuid, major and minor")
        }
        let new = NewBike(
            uuid: uuid, major: major, minor: minor, make: request.bike.make, model: request.bike.model,
            colour: request.bike.colour)
        return switch try await database.register(new, now: now()) {
        case .registered(let registration): .registered(registration)
        case .beaconTaken, .claimRefused: .taken
        }
    }

    private func claim(code: String, _ request: RegistrationRequest, network: String) async throws -> Outcome {
        let outcome: RegisterOutcome =
            if let hash = ClaimCode.hash(code) {
                try await database.claim(codeHash: hash, matching: request.beacon, bike: request.bike, now: now())
            } else {
                .claimRefused
            }
        guard case .registered(let registration) = outcome else {
            try await wrongCodes.note(network, now: now())
            return .refused
        }
        return .registered(registration)
    }
}
