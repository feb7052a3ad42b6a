public import Crypto

/// A rotating beacon's identity in one epoch (docs/rotating-beacon.md): the major and minor it advertises and the
/// address it advertises them from. The registry computes them to list a missing bike's current identities and to
/// verify a sighting; `beacon/rotating_id.c` computes the same on the beacon. Pure: no clock, no I/O.
public struct RotatingIdentity: Hashable, Sendable {
    public let epoch: UInt64
    public let major: UInt16
    public let minor: UInt16
    /// Most significant byte first: a non-resolvable private address.
    public let address: [UInt8]

    /// The label every message starts with, so a key used for this scheme answers nothing else.
    package static let label = Array("FMB-ROT1".utf8)

    /// `HMAC-SHA256(key, "FMB-ROT1" || epoch as 8 bytes big-endian)`: bytes 0–1 the major, 2–3 the minor, 4–9 the
    /// address with its top two bits cleared (and its lowest bit flipped if the other 46 are all 0 or all 1).
    public init(key: SymmetricKey, epoch: UInt64) {
        var message = Self.label
        message.reserveCapacity(16)
        for shift in stride(from: 56, through: 0, by: -8) { message.append(UInt8(truncatingIfNeeded: epoch >> shift)) }
        let mac = Array(HMAC<SHA256>.authenticationCode(for: message, using: key))
        self.epoch = epoch
        major = UInt16(mac[0]) << 8 | UInt16(mac[1])
        minor = UInt16(mac[2]) << 8 | UInt16(mac[3])
        var address = Array(mac[4..<10])
        address[0] &= 0x3F
        let rest = address[1...]
        if (address[0] == 0 && rest.allSatisfy { $0 == 0 }) || (address[0] == 0x3F && rest.allSatisfy { $0 == 0xFF }) {
            address[5] ^= 1
        }
        self.address = address
    }

    /// The identity at `unixTime` for a beacon rotating every `period` seconds (at least 1).
    public init(key: SymmetricKey, period: UInt32, unixTime: UInt64) {
        self.init(key: key, epoch: Self.epoch(unixTime: unixTime, period: period))
    }

    public static func epoch(unixTime: UInt64, period: UInt32) -> UInt64 { unixTime / UInt64(max(period, 1)) }

    /// `3D:26:6C:8D:3E:20`.
    public var addressText: String {
        address.map { byte in
            let digits = String(byte, radix: 16, uppercase: true)
            return digits.count == 1 ? "0" + digits : digits
        }
        .joined(separator: ":")
    }
}
