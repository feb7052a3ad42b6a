public import BeaconWire
public import Foundation

/// One decoded iBeacon advert with where its record ended, for truncation checks.
public struct DecodedAdvert: Equatable, CustomStringConvertible {
    public var position: RecordPosition
    public var advert: Advert

    public var description: String { "frame \(position.frame) ending at \(position.endOffset): \(advert)" }

    /// The record's frame number and the advert, without the byte offset (a hex line cut just before its
    /// newline is the same record ending one byte earlier).
    public struct Identity: Equatable, CustomStringConvertible {
        public var frame: Int
        public var advert: Advert
        public var description: String { "frame \(frame): \(advert)" }
    }

    public var identity: Identity { Identity(frame: position.frame, advert: advert) }
}

public struct DecodeResult {
    public var adverts: [DecodedAdvert]
    public var counters: DecodeCounters
    public var format: CaptureFormat

    /// The iBeacon adverts as the JSON objects `beacond replay --format jsonl` prints.
    public func jsonObjects() throws -> [[String: JSONValue]] {
        try adverts.compactMap { decoded in
            guard let line = AdvertLine(frame: decoded.position.frame, advert: decoded.advert) else { return nil }
            return try JSONValue.object(from: line.json)
        }
    }
}

public enum Decode {
    /// Decodes bytes held in memory through the same streaming path a file takes. `chunk` and `capacity`
    /// make the stream refill often, to exercise records split across reads.
    public static func bytes(_ bytes: [UInt8], chunk: Int = .max, capacity: Int = 65_536) throws -> DecodeResult {
        let stream = try CaptureStream(source: MemoryByteSource(bytes, chunk: chunk), capacity: capacity)
        var decoder = AdvertDecoder()
        var adverts: [DecodedAdvert] = []
        try stream.forEachRecord { record, position in
            decoder.decode(record) { advert in
                adverts.append(DecodedAdvert(position: position, advert: advert))
            }
        }
        var counters = decoder.counters
        counters.add(stream.counters)
        return DecodeResult(adverts: adverts, counters: counters, format: stream.format)
    }

    public static func file(_ url: URL) throws -> DecodeResult {
        try bytes(Array(try Data(contentsOf: url)))
    }

    /// Only the iBeacons.
    public static func beacons(_ result: DecodeResult) -> [DecodedAdvert] {
        result.adverts.filter { $0.advert.kind == .iBeacon }
    }
}
