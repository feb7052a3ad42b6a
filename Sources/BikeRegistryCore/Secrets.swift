import Crypto
import Foundation

/// The registry's secrets: station keys, owner tokens and webhook secrets, each random and shown once. Keys and
/// tokens are stored as their SHA-256 (hex): a stolen database names no working key.
public enum Secrets {
    /// `prefix` and 32 random bytes in base64url (no padding): 43 characters, 256 bits.
    public static func newToken(prefix: String) -> String {
        prefix + base64URL(randomBytes(32))
    }

    /// An owner token: `bko_` and 43 base64url characters, which fit in a URL's path as they are.
    public static func newOwnerToken() -> String { newToken(prefix: "bko_") }

    /// A Standard Webhooks secret: `whsec_` and base64 of 24 random bytes; the HMAC key is the decoded bytes.
    public static func newWebhookSecret() -> String {
        "whsec_" + Data(randomBytes(24)).base64EncodedString()
    }

    /// Every station request hashes its key: hex by hand, as `String(format:)` per byte cost more than the hash.
    public static func hash(_ token: String) -> String {
        var token = token
        // Hashed from the string's own bytes: every station request hashes its key.
        return token.withUTF8 { hex(SHA256.hash(data: UnsafeRawBufferPointer($0))) }
    }

    public static func hex(_ bytes: some Collection<UInt8>) -> String {
        String(unsafeUninitializedCapacity: bytes.count * 2) { text in
            var index = 0
            for byte in bytes {
                text[index] = digit(byte >> 4)
                text[index + 1] = digit(byte & 0x0F)
                index += 2
            }
            return index
        }
    }

    static func hex(_ digest: some Digest) -> String {
        digest.withUnsafeBytes { hex($0) }
    }

    private static func digit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }

    /// A short id from a random source: `prefix` and 16 hex digits.
    public static func newID(prefix: String) -> String {
        prefix + hex(randomBytes(8))
    }

    /// A stable id for `parts` (the same parts give the same id): `prefix` and 24 hex digits of their SHA-256.
    package static func derivedID(prefix: String, _ parts: [String]) -> String {
        prefix + hex(Array(SHA256.hash(data: Data(parts.joined(separator: "\u{1f}").utf8)).prefix(12)))
    }

    private static func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    private static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(
            of: "/", with: "_"
        )
        .replacingOccurrences(of: "=", with: "")
    }
}
