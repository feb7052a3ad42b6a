public import Foundation

/// The address a bike's messages also go to by e-mail (issue 39), and where it stands: the bike's e-mail target, as
/// the mail's parts read it. Deleted with the bike; never sent to a station, written to a log or shown to anyone but
/// the bike's owner.
public struct OwnerEmail: Sendable, Equatable {
    public typealias State = NotificationTarget.State

    public var address: String
    public var state: State
    /// The relay's reply, when failing.
    public var failure: String?
    /// The key of its one-click unsubscribe URL (RFC 8058), which needs no owner token: random, new with each address.
    public var unsubscribeKey: String

    public init(address: String, state: State, failure: String?, unsubscribeKey: String) {
        self.address = address
        self.state = state
        self.failure = failure
        self.unsubscribeKey = unsubscribeKey
    }

    /// The bike's e-mail target as its owner's address; nil for another channel's, or one without its key.
    package init?(_ target: NotificationTarget) {
        guard target.channel == .email, let key = target.unsubscribeKey else { return nil }
        self.init(address: target.address, state: target.state, failure: target.failure, unsubscribeKey: key)
    }
}

/// How many confirmation messages may be sent in a day: the registry must never become a way to mail strangers.
public struct EmailLimits: Sendable, Equatable {
    public var perBikePerDay: Int
    /// Across every bike: the recipient's own limit.
    public var perAddressPerDay: Int
    /// How long a confirmation link is good for.
    public var confirmationValid: TimeInterval

    public init(perBikePerDay: Int = 3, perAddressPerDay: Int = 5, confirmationValid: TimeInterval = 86_400) {
        self.perBikePerDay = perBikePerDay
        self.perAddressPerDay = perAddressPerDay
        self.confirmationValid = confirmationValid
    }
}

/// What became of an owner's change of address.
public enum EmailChange: Sendable, Equatable {
    /// The address is new (or unconfirmed and given again): its confirmation message is owed.
    case confirmationOwed(Bike)
    /// The same address as before, confirmed already, or the address was removed: nothing is sent.
    case unchanged(Bike)
    case removed(Bike)
    /// The bike has had `perBikePerDay` confirmations in the last day.
    case bikeLimited
    /// The address has had `perAddressPerDay` confirmations in the last day, for any bikes.
    case addressLimited
    case notOwner
}

/// The message that asks an address to confirm: the link's code is in it (and only its hash on the bike), so it is
/// the one message kept with a secret. The code is good for a day, and only confirms.
public struct EmailConfirmationNotice: Sendable, Equatable {
    public static let type = "email.confirm"

    public var bikeId: String
    public var code: String
    public var expiresAt: Date
    public var timestamp: Date

    public func json() -> String {
        var json = JSONWriter()
        json.raw("{")
        json.key("data", first: true)
        json.raw("{")
        json.key("bikeId", first: true)
        json.string(bikeId)
        json.key("code")
        json.string(code)
        json.key("expiresAt")
        json.string(ISOTime.format(expiresAt))
        json.raw("}")
        json.key("timestamp")
        json.string(ISOTime.format(timestamp))
        json.key("type")
        json.string(Self.type)
        json.raw("}")
        return json.text
    }

    public static func decode(_ json: String) -> EmailConfirmationNotice? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any],
            object["type"] as? String == type,
            let timestamp = (object["timestamp"] as? String).flatMap(ISOTime.parse),
            let data = object["data"] as? [String: Any], let bikeId = data["bikeId"] as? String,
            let code = data["code"] as? String, let expiresAt = (data["expiresAt"] as? String).flatMap(ISOTime.parse)
        else { return nil }
        return EmailConfirmationNotice(bikeId: bikeId, code: code, expiresAt: expiresAt, timestamp: timestamp)
    }
}

/// The operator's count of addresses, by state; never the addresses.
public struct EmailCounts: Sendable, Equatable, Codable {
    public var confirmed: Int
    public var unconfirmed: Int
    public var failing: Int

    public init(confirmed: Int, unconfirmed: Int, failing: Int) {
        self.confirmed = confirmed
        self.unconfirmed = unconfirmed
        self.failing = failing
    }
}

/// What both stores write for a change of address: the new row values, the confirmation and its message.
package struct EmailChangeRecord {
    package var address: String
    package var code = Secrets.newToken(prefix: "")
    package var unsubscribeKey = Secrets.newToken(prefix: "")
    package var addressHash: String

    package init(address: String) {
        self.address = address
        addressHash = Secrets.hash(address.lowercased())
    }

    package func notice(bikeId: String, limits: EmailLimits, now: Date) -> EmailConfirmationNotice {
        EmailConfirmationNotice(
            bikeId: bikeId, code: code, expiresAt: now.addingTimeInterval(limits.confirmationValid), timestamp: now)
    }

    /// The confirmation's message id: one per code.
    package var messageId: String { Secrets.derivedID(prefix: "msg_", [code, EmailConfirmationNotice.type]) }
}
