public import Foundation

/// A message about a bike's report rather than a sighting: the reminder before it lapses, the lapse, and a pause of
/// its notifications. Standard Webhooks' shape as `bike.seen` has (`type`, `timestamp`, `data`), with `data` holding
/// `bikeId` and, for the first two, `lapsesAt`. Built when the store decides it is owed, and kept as it is.
public struct ReportNotice: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        case lapsing = "bike.missing_lapsing"
        case lapsed = "bike.missing_lapsed"
        case paused = "bike.paused"
    }

    public var type: Kind
    public var timestamp: Date
    public var bikeId: String
    public var lapsesAt: Date?

    public init(type: Kind, timestamp: Date, bikeId: String, lapsesAt: Date?) {
        self.type = type
        self.timestamp = timestamp
        self.bikeId = bikeId
        self.lapsesAt = lapsesAt
    }

    /// Sorted keys, times in milliseconds, as `NotificationPayload.json` writes.
    public func json() -> String {
        var json = JSONWriter()
        json.raw("{")
        json.key("data", first: true)
        json.raw("{")
        json.key("bikeId", first: true)
        json.string(bikeId)
        if let lapsesAt {
            json.key("lapsesAt")
            json.string(ISOTime.format(lapsesAt))
        }
        json.raw("}")
        json.key("timestamp")
        json.string(ISOTime.format(timestamp))
        json.key("type")
        json.string(type.rawValue)
        json.raw("}")
        return json.text
    }

    /// The notice `json` wrote; nil for anything else (a sighting's message).
    public static func decode(_ json: String) -> ReportNotice? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any],
            let type = (object["type"] as? String).flatMap(Kind.init(rawValue:)),
            let timestamp = (object["timestamp"] as? String).flatMap(ISOTime.parse),
            let data = object["data"] as? [String: Any], let bikeId = data["bikeId"] as? String
        else { return nil }
        return ReportNotice(
            type: type, timestamp: timestamp, bikeId: bikeId,
            lapsesAt: (data["lapsesAt"] as? String).flatMap(ISOTime.parse))
    }

    /// The id of what the notice owes, kept once under `key` (its report's, or its reminder's): on each of the
    /// bike's targets its id is `MessageID.on(channel, owed:)` of this.
    package func owedID(key: String) -> String { MessageID.owed([key, type.rawValue]) }
}
