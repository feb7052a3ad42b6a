public import Foundation

/// The body of a message to an owner, in the Standard Webhooks shape: `type`, `timestamp` and `data`. Built when the
/// sighting is stored and kept as it is, so every attempt sends the same bytes under the same webhook-id.
public struct NotificationPayload: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable {
        case seen = "bike.seen"
        case left = "bike.left"
        /// Sent from the owner page's "send a test": no station heard anything.
        case test = "bike.test"
    }

    public struct StationPlace: Codable, Sendable, Equatable {
        public var name: String
        public var latitude: Double
        public var longitude: Double

        public init(name: String, latitude: Double, longitude: Double) {
            self.name = name
            self.latitude = latitude
            self.longitude = longitude
        }
    }

    public struct Details: Codable, Sendable, Equatable {
        public var bikeId: String
        public var station: StationPlace
        /// When the bike was heard (first heard for `bike.seen`, last heard for `bike.left`), not when this was sent.
        public var seenAt: Date
        public var proximity: String
        /// Shared by a visit's seen and left messages.
        public var visitId: String
        /// Present, and true, only when the station's clock was wrong: `seenAt` is when the registry received the
        /// sighting (`StationClockCheck`).
        public var timesAsReceived: Bool?
    }

    public var type: Kind
    public var timestamp: Date
    public var data: Details

    package init(
        type: Kind, timestamp: Date, bikeId: String, station: Station, seenAt: Date, proximity: String, visitId: String,
        timesAsReceived: Bool = false
    ) {
        self.type = type
        self.timestamp = timestamp
        data = Details(
            bikeId: bikeId,
            station: StationPlace(name: station.name, latitude: station.latitude, longitude: station.longitude),
            seenAt: seenAt, proximity: proximity, visitId: visitId, timesAsReceived: timesAsReceived ? true : nil)
    }

    /// The owner page's test message: the shape of a real one, from a "station" that says it is a test.
    public static func test(bikeId: String, now: Date) -> NotificationPayload {
        NotificationPayload(
            type: .test, timestamp: now,
            data: Details(
                bikeId: bikeId, station: StationPlace(name: "a test from bike-registry", latitude: 0, longitude: 0),
                seenAt: now, proximity: "near", visitId: "test", timesAsReceived: nil))
    }

    private init(type: Kind, timestamp: Date, data: Details) {
        self.type = type
        self.timestamp = timestamp
        self.data = data
    }

    /// Sorted keys, times in milliseconds (an owner may compare the time with a camera's): what `decode` reads.
    public func json() throws -> String {
        var json = JSONWriter()
        json.raw("{")
        json.key("data", first: true)
        json.raw("{")
        json.key("bikeId", first: true)
        json.string(data.bikeId)
        json.key("proximity")
        json.string(data.proximity)
        json.key("seenAt")
        json.string(ISOTime.format(data.seenAt))
        json.key("station")
        json.raw("{")
        json.key("latitude", first: true)
        json.number(data.station.latitude)
        json.key("longitude")
        json.number(data.station.longitude)
        json.key("name")
        json.string(data.station.name)
        json.raw("}")
        if data.timesAsReceived == true {
            json.key("timesAsReceived")
            json.raw("true")
        }
        json.key("visitId")
        json.string(data.visitId)
        json.raw("}")
        json.key("timestamp")
        json.string(ISOTime.format(timestamp))
        json.key("type")
        json.string(type.rawValue)
        json.raw("}")
        return json.text
    }

    public static func decode(_ json: String) throws -> NotificationPayload {
        try decoder.decode(NotificationPayload.self, from: Data(json.utf8))
    }

    private static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let text = try decoder.singleValueContainer().decode(String.self)
            guard let date = ISOTime.parse(text) else {
                throw DecodingError.dataCorrupted(
                    .init(codingPath: decoder.codingPath, debugDescription: "not an ISO 8601 time"))
            }
            return date
        }
        return decoder
    }()
}
