#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The changes as `226 IM Used` carries them (docs/registry-api.yaml, ListChanges): `version`, `checksum`, `count`,
/// `removed` (ids), `added` (bikes as `GET /bikes` lists them) and `moves` (base64).
extension ListChanges: Codable {
    private enum Key: String, CodingKey { case version, checksum, count, removed, added, moves }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        let moves = try container.decode(String.self, forKey: .moves)
        guard let bytes = Data(base64Encoded: moves) else {
            throw DecodingError.dataCorruptedError(forKey: .moves, in: container, debugDescription: "not base64")
        }
        self.init(
            version: try container.decode(String.self, forKey: .version),
            checksum: try container.decode(String.self, forKey: .checksum),
            count: try container.decode(Int.self, forKey: .count),
            removed: try container.decode([String].self, forKey: .removed),
            added: try container.decode([ListedEntry].self, forKey: .added), moves: Array(bytes))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(version, forKey: .version)
        try container.encode(checksum, forKey: .checksum)
        try container.encode(count, forKey: .count)
        try container.encode(removed, forKey: .removed)
        try container.encode(added, forKey: .added)
        try container.encode(Data(moves).base64EncodedString(), forKey: .moves)
    }
}

/// A bike as `GET /bikes` lists it (docs/registry-api.yaml, Bike): a fixed beacon's `beaconMajor` and
/// `beaconMinor`, or a rotating beacon's `beaconIdentities` (`[major, minor]` pairs).
extension ListedEntry: Codable {
    private enum Key: String, CodingKey {
        case id, beaconUUID, beaconMajor, beaconMinor, beaconIdentities, missing, make, model, colour
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        let pairs = try container.decodeIfPresent([[Int]].self, forKey: .beaconIdentities) ?? []
        var identities: [UInt32] = []
        for pair in pairs {
            guard pair.count == 2, let major = UInt16(exactly: pair[0]), let minor = UInt16(exactly: pair[1]) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .beaconIdentities, in: container, debugDescription: "not [major, minor] pairs 0-65535")
            }
            identities.append(UInt32(major) << 16 | UInt32(minor))
        }
        self.init(
            id: try container.decode(String.self, forKey: .id),
            uuid: try container.decodeIfPresent(String.self, forKey: .beaconUUID),
            major: try container.decodeIfPresent(Int.self, forKey: .beaconMajor),
            minor: try container.decodeIfPresent(Int.self, forKey: .beaconMinor) ?? 0, identities: identities,
            make: try container.decodeIfPresent(String.self, forKey: .make),
            model: try container.decodeIfPresent(String.self, forKey: .model),
            colour: try container.decodeIfPresent(String.self, forKey: .colour))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(id, forKey: .id)
        try container.encodeIfPresent(uuid, forKey: .beaconUUID)
        if isRotating {
            try container.encode(identities.map { [Int($0 >> 16), Int($0 & 0xFFFF)] }, forKey: .beaconIdentities)
        } else {
            try container.encodeIfPresent(major, forKey: .beaconMajor)
            try container.encode(minor, forKey: .beaconMinor)
        }
        try container.encode(true, forKey: .missing)
        try container.encodeIfPresent(make, forKey: .make)
        try container.encodeIfPresent(model, forKey: .model)
        try container.encodeIfPresent(colour, forKey: .colour)
    }
}
