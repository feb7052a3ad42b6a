public import BeaconEngine
public import BeaconOutbox
import BeaconWire

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A sighting as it leaves the station, built from the engine's `Sighting` with the station's place and the wall
/// time: what every sink is given. Its JSON is the outbox's stored form and, byte for byte, the body of the
/// registry's `POST /sightings` (the FindMyBike registry's required fields `bikeId`, `date`, `latitude`,
/// `longitude`, plus beacond's own; see docs/registry-api.yaml). Another sink encodes what it needs from the fields.
public struct OutgoingSighting: Codable, Hashable, Sendable {
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
    /// false when the times come from a clock that was never synchronised (sent so only after waiting for it;
    /// see `SightingClock`); absent otherwise.
    public var clockSynchronized: Bool?

    /// `offset` turns the sighting's times into wall time: 0 for a replay (its times are wall times already),
    /// wall minus monotonic for live capture.
    public init(_ sighting: Sighting, stationID: String, latitude: Double, longitude: Double, offset: Int64 = 0) {
        bikeId = sighting.bikeID
        date = Self.iso(sighting.lastSeen.nanosecondsSinceEpoch, offset)
        self.latitude = latitude
        self.longitude = longitude
        sightingId = sighting.id.description
        kind = sighting.kind.rawValue
        stationId = stationID
        uuid = sighting.beacon.uuid.description
        major = sighting.beacon.major
        minor = sighting.beacon.minor
        firstSeen = Self.iso(sighting.firstSeen.nanosecondsSinceEpoch, offset)
        lastSeen = Self.iso(sighting.lastSeen.nanosecondsSinceEpoch, offset)
        count = sighting.count
        rssi = sighting.rssi.map { ($0 * 10).rounded() / 10 }
        proximity = sighting.proximity.rawValue
    }

    /// The stored form, keys sorted so it is byte-for-byte the same for the same sighting (the registry's POST is
    /// idempotent by `sightingId`, and a retry sends the same bytes).
    public var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding this struct of strings and numbers cannot fail.
        return String(decoding: (try? encoder.encode(self)) ?? Data("{}".utf8), as: UTF8.self)
    }

    static func iso(_ nanoseconds: Int64, _ offset: Int64) -> String {
        CaptureTime(nanosecondsSinceEpoch: nanoseconds &+ offset).iso8601
    }

    /// The outbox row for a sighting. With `pending`, its times are monotonic and the clock not synchronised: the
    /// body carries provisional times (with `pending.offset`) and is settled before it is sent.
    public static func outboxItem(
        _ sighting: Sighting, stationID: String, latitude: Double, longitude: Double, offset: Int64 = 0,
        pending: PendingTime? = nil
    ) -> OutboxItem {
        let payload = OutgoingSighting(
            sighting, stationID: stationID, latitude: latitude, longitude: longitude, offset: offset)
        return OutboxItem(
            sightingID: payload.sightingId, kind: sighting.kind, body: payload.json, bikeID: sighting.bikeID,
            seenAt: (sighting.lastSeen.nanosecondsSinceEpoch &+ offset) / 1_000_000, rssi: payload.rssi,
            proximity: payload.proximity,
            pendingTime: pending)
    }

    /// A queued sighting read back from its stored form; nil when the body is not one (beacond wrote it, so that is
    /// a bug, or a damaged row).
    public init?(stored body: String) {
        guard let sighting = try? JSONDecoder().decode(OutgoingSighting.self, from: Data(body.utf8)) else { return nil }
        self = sighting
    }

    /// The sighting with its provisional times settled: labelled with `offset`, and marked when the clock was not
    /// synchronised.
    public func settled(_ pending: PendingTime, offset: Int64, synchronized: Bool) -> OutgoingSighting {
        var sighting = self
        sighting.firstSeen = Self.iso(pending.firstSeen, offset)
        sighting.lastSeen = Self.iso(pending.lastSeen, offset)
        sighting.date = sighting.lastSeen
        sighting.clockSynchronized = synchronized ? nil : false
        return sighting
    }
}
