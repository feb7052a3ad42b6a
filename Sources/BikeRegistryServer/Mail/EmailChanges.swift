import BikeRegistryCore
import BikeRegistryMail
import BikeRegistryStore
import DaemonSupport
import Foundation
import Hummingbird

/// An owner's change of address, as the API and the page both make it: refused when e-mail is off, 429 past the
/// confirmation limits (with what the limit is), otherwise kept, with the confirmation owed.
struct EmailChanges: Sendable {
    let database: any RegistryStore
    let mail: MailSettings?
    /// Rung when a confirmation is owed, so the worker sends it now.
    let doorbell: Doorbell
    /// Told of each refusal by a confirmation limit.
    var metrics: RegistryMetrics?

    /// The confirmation limits' names, for the metrics.
    static let limitNames = ["confirmationsPerBike", "confirmationsPerAddress"]

    static let badAddress =
        "notify.email is not an address this registry can send to: local@domain.example, in ASCII, at most 254 characters"
    static let off = "notify.email: this registry sends no e-mail (its operator has configured no mail relay)"

    /// - Parameter address: checked already (`EmailChannel.parsed`); nil removes it.
    func change(bikeId: String, ownerToken: String, to address: String?, now: Date) async throws {
        // An address may always be removed, even one kept from before the relay was taken away.
        guard mail != nil || address == nil else { throw APIError.badRequest(Self.off) }
        let limits = mail?.limits ?? EmailLimits()
        switch try await database.changeEmail(
            id: bikeId, ownerToken: ownerToken, to: address, limits: limits, now: now)
        {
        case .notOwner: throw APIError.notFound
        case .bikeLimited:
            metrics?.refused(by: Self.limitNames[0])
            throw HTTPError(
                .tooManyRequests, headers: [.retryAfter: "86400"],
                message:
                    "a bike may send at most \(limits.perBikePerDay) confirmation messages a day; try again tomorrow"
            )
        case .addressLimited:
            metrics?.refused(by: Self.limitNames[1])
            throw HTTPError(
                .tooManyRequests, headers: [.retryAfter: "86400"],
                message:
                    "this address has been sent \(limits.perAddressPerDay) confirmation messages today; try again tomorrow"
            )
        case .confirmationOwed: doorbell.ring()
        case .unchanged, .removed: return
        }
    }
}
