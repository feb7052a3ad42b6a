import BikeRegistryCore
import BikeRegistryStore
import DaemonSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOCore

/// `POST /sightings`'s body (docs/registry-api.yaml, Sighting), checked field by field.
struct SightingBody: Decodable {
    var report: SightingReport

    static let fields: Set<String> = [
        "bikeId", "date", "latitude", "longitude", "sightingId", "kind", "stationId", "uuid", "major", "minor",
        "firstSeen", "lastSeen",
        "count", "rssi", "proximity", "clockSynchronized",
    ]
    static let proximities: Set<String> = ["immediate", "near", "far", "unknown"]

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: AnyKey.self)
        try container.refuseUnknown(Self.fields)
        func field<T: Decodable>(_ name: String, _ type: T.Type = T.self) throws -> T {
            try container.decode(T.self, forKey: AnyKey(stringValue: name))
        }
        let sightingId = try field("sightingId", String.self)
        guard UUID(uuidString: sightingId) != nil else { throw FieldError("sightingId is not a UUID") }
        let bikeId = try field("bikeId", String.self)
        guard (1...256).contains(bikeId.unicodeScalars.count) else { throw FieldError("bikeId is 1 to 256 characters") }
        try FieldError.refuseControlCharacters(bikeId, in: "bikeId")
        guard let kind = SightingReport.Kind(rawValue: try field("kind", String.self)) else {
            throw FieldError("kind is enter, update or exit")
        }
        let proximity = try field("proximity", String.self)
        guard Self.proximities.contains(proximity) else {
            throw FieldError("proximity is immediate, near, far or unknown")
        }
        // Required by the schema; the registry places a sighting at its station's recorded position, not the one sent.
        for number in ["latitude", "longitude"] { _ = try field(number, Double.self) }
        _ = try field("stationId", String.self)
        guard UUID(uuidString: try field("uuid", String.self)) != nil else { throw FieldError("uuid is not a UUID") }
        let heard = try ["major", "minor"].map { number in
            let value = try field(number, Int.self)
            guard (0...65535).contains(value) else { throw FieldError("\(number) is 0 to 65535") }
            return value
        }
        let count = try field("count", Int.self)
        guard (0...Int(Int32.max)).contains(count) else { throw FieldError("count is 0 to 2147483647") }
        let rssi = try container.decodeIfPresent(Double.self, forKey: AnyKey(stringValue: "rssi"))
        // Present means a boolean: null is not one.
        let synchronized = AnyKey(stringValue: "clockSynchronized")
        if container.contains(synchronized) { _ = try container.decode(Bool.self, forKey: synchronized) }
        report = SightingReport(
            sightingId: sightingId.lowercased(), bikeId: bikeId, kind: kind, date: try container.time("date"),
            firstSeen: try container.time("firstSeen"), lastSeen: try container.time("lastSeen"), proximity: proximity,
            rssi: rssi,
            count: count)
        report.heardMajor = heard[0]
        report.heardMinor = heard[1]
    }
}
