import BikeRegistryCore
import BikeRegistryStore
import Foundation
import HTTPTypes
import Hummingbird

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
