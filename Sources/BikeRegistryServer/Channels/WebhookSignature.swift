import Crypto
import Foundation

/// Standard Webhooks signing: `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, keyed with the
/// base64-decoded part of the bike's `whsec_` secret.
enum WebhookSignature {
    static func sign(id: String, timestamp: Int, body: String, secret: String) -> String? {
        guard secret.hasPrefix("whsec_"), let key = Data(base64Encoded: String(secret.dropFirst("whsec_".count))) else {
            return nil
        }
        let mac = HMAC<SHA256>.authenticationCode(
            for: Data("\(id).\(timestamp).\(body)".utf8), using: SymmetricKey(data: key))
        return "v1," + Data(mac).base64EncodedString()
    }
}
