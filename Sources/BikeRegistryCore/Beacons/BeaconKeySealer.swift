import Crypto
import Foundation

/// Seals rotating beacons' keys for the database with a key the database does not hold (`--key-file`, or a systemd
/// credential): a copy of the database alone reveals none of them (docs/rotating-beacon.md).
///
/// A sealed key is `v1:KEYID:` and base64 of AES-256-GCM's nonce, ciphertext and tag. KEYID names the sealing key
/// (the first 8 hex digits of its SHA-256), so a registry started with another key file says so rather than
/// calling every beacon damaged. The beacon's name is the additional data: a sealed key copied onto another
/// beacon's row does not open.
public struct BeaconKeySealer: Sendable {
    public enum Failure: Error, Equatable, CustomStringConvertible {
        /// The key file is not 64 hex digits (256 bits), white space around them allowed.
        case keyFile
        /// Sealed under another key (its id).
        case otherKey(String)
        /// Not a sealed key, or altered, or sealed for another beacon.
        case damaged

        public var description: String {
            switch self {
            case .keyFile:
                "the beacon key file must hold 64 hex digits (a 256-bit key: `openssl rand -hex 32` makes one)"
            case .otherKey(let id): "sealed under another beacon key file (key id \(id))"
            case .damaged: "not a sealed beacon key, or altered"
            }
        }
    }

    private let key: SymmetricKey
    /// The first 8 hex digits of the key's SHA-256.
    public let keyID: String

    public init(keyFileText: String) throws(Failure) {
        let digits = Array(keyFileText.utf8).filter { !($0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09) }
        guard digits.count == 64, let bytes = Self.bytes(hex: digits) else { throw .keyFile }
        key = SymmetricKey(data: bytes)
        keyID = String(Secrets.hex(SHA256.hash(data: bytes)).prefix(8))
    }

    /// `key` sealed for the beacon named `beacon`.
    public func seal(_ key: [UInt8], beacon: String) -> String {
        // AES-GCM with a fresh random 96-bit nonce: safe for far more keys than a registry will ever seal.
        guard let box = try? AES.GCM.seal(key, using: self.key, authenticating: Array(beacon.utf8)),
            let combined = box.combined
        else { preconditionFailure("AES-GCM sealing with a 256-bit key and a random nonce cannot fail") }
        return "v1:\(keyID):" + combined.base64EncodedString()
    }

    /// The key sealed for the beacon named `beacon`.
    public func open(_ sealed: String, beacon: String) throws(Failure) -> [UInt8] {
        let parts = sealed.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "v1" else { throw .damaged }
        guard parts[1] == keyID else { throw .otherKey(String(parts[1])) }
        guard let combined = Data(base64Encoded: String(parts[2])),
            let box = try? AES.GCM.SealedBox(combined: combined),
            let opened = try? AES.GCM.open(box, using: key, authenticating: Array(beacon.utf8))
        else { throw .damaged }
        return Array(opened)
    }

    /// Hex digits (either case) as bytes; nil for an odd count or a digit that is not hex.
    public static func bytes(hex: [UInt8]) -> [UInt8]? {
        func value(_ digit: UInt8) -> UInt8? {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        guard hex.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(hex.count / 2)
        var index = 0
        while index < hex.count {
            guard let high = value(hex[index]), let low = value(hex[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }
}
