import Crypto
import Foundation

/// The registry's secrets: station keys, owner tokens and webhook secrets, each random and shown once. Keys and
/// tokens are stored as their SHA-256 (hex): a stolen database names no working key.
public enum Secrets {
    /// `prefix` and 32 random bytes in base64url (no padding): 43 characters, 256 bits.
    public static func newToken(prefix: String) -> String {
        prefix + base64URL(randomBytes(32))
    }

    /// A Standard Webhooks secret: `whsec_` and base64 of 24 random bytes; the HMAC key is the decoded bytes.
    public static func newWebhookSecret() -> String {
        "whsec_" + Data(randomBytes(24)).base64EncodedString()
    }

    public static func hash(_ token: String) -> String {
        SHA256.hash(data: Data(token.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// A short id from a random source: `prefix` and 16 hex digits.
    public static func newID(prefix: String) -> String {
        prefix + randomBytes(8).map { String(format: "%02x", $0) }.joined()
    }

    /// A stable id for `parts` (the same parts give the same id): `prefix` and 24 hex digits of their SHA-256.
    static func derivedID(prefix: String, _ parts: [String]) -> String {
        prefix + SHA256.hash(data: Data(parts.joined(separator: "\u{1f}").utf8)).prefix(12).map { String(format: "%02x", $0) }.joined()
    }

    private static func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    private static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
