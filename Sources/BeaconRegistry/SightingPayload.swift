public import BeaconEngine
public import BeaconOutbox
import BeaconWire
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The body of `POST /sightings`: the FindMyBike registry's required fields (`bikeId`, `date`, `latitude`,
/// `longitude`) plus beacond's own. See docs/registry-api.yaml.
public struct SightingPayload: Codable, Hashable, Sendable {
    public var bikeId: String
    /// When the event happened: the advert that caused it (the last one heard for an update or exit).
    public var date: String
    public var latitude: Double
    public var longitude: Double
    public var sightingId: String
    public var kind: String
    public var stationId: String
    public var uuid: String
    public var major: UInt16
    public var minor: UInt16
    public var firstSeen: String
    public var lastSeen: String
    public var count: Int
    public var rssi: Double?
    public var proximity: String

    public init(_ sighting: Sighting, stationID: String, latitude: Double, longitude: Double) {
        bikeId = sighting.bikeID
        date = sighting.lastSeen.iso8601
        self.latitude = latitude
        self.longitude = longitude
        sightingId = sighting.id.description
        kind = sighting.kind.rawValue
        stationId = stationID
        uuid = sighting.beacon.uuid.description
        major = sighting.beacon.major
        minor = sighting.beacon.minor
        firstSeen = sighting.firstSeen.iso8601
        lastSeen = sighting.lastSeen.iso8601
        count = sighting.count
        rssi = sighting.rssi.map { ($0 * 10).rounded() / 10 }
        proximity = sighting.proximity.rawValue
    }

    /// The request body, keys sorted so the stored body is byte-for-byte the same for the same sighting.
    public var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding this struct of strings and numbers cannot fail.
        return String(decoding: (try? encoder.encode(self)) ?? Data("{}".utf8), as: UTF8.self)
    }

    /// The outbox row for a sighting.
    public static func outboxItem(_ sighting: Sighting, stationID: String, latitude: Double, longitude: Double) -> OutboxItem {
        let payload = SightingPayload(sighting, stationID: stationID, latitude: latitude, longitude: longitude)
        return OutboxItem(
            sightingID: payload.sightingId, kind: sighting.kind, body: payload.json, bikeID: sighting.bikeID,
            seenAt: sighting.lastSeen.nanosecondsSinceEpoch / 1_000_000, rssi: payload.rssi, proximity: payload.proximity)
    }
}
