import AsyncHTTPClient
import BikeRegistryStore
import Foundation
import NIOCore
import NIOHTTP1

/// One attempt to deliver a message to an owner's webhook (signed, Standard Webhooks) or ntfy topic, and what came
/// of it. The notification worker's deliveries and the owner page's "send a test" both go through it, so the test
/// is what a real message would meet.
struct NotificationSender: Sendable {
    let targets: NotificationTargetPolicy
    let client: HTTPClient

    enum Outcome {
        case delivered
        case gone
        case retry(String, retryAfter: TimeInterval?)
    }

    func attempt(_ notification: PendingNotification) async -> Outcome {
        if let refusal = await targets.refusal(for: notification.target) {
            return .retry("target refused: \(refusal)", retryAfter: 3600)
        }
        var request = HTTPClientRequest(url: notification.target)
        request.method = .POST
        switch notification.channel {
        case .webhook:
            let timestamp = Int(Date().timeIntervalSince1970)
            guard
                let signature = WebhookSignature.sign(
                    id: notification.id, timestamp: timestamp, body: notification.payload,
                    secret: notification.webhookSecret)
            else { return .retry("the bike's webhook secret is malformed", retryAfter: nil) }
            request.headers.add(name: "Content-Type", value: "application/json")
            request.headers.add(name: "webhook-id", value: notification.id)
            request.headers.add(name: "webhook-timestamp", value: String(timestamp))
            request.headers.add(name: "webhook-signature", value: signature)
            request.body = .bytes(ByteBuffer(string: notification.payload))
        case .ntfy:
            guard let payload = try? NotificationPayload.decode(notification.payload) else {
                return .retry("unreadable payload", retryAfter: 3600)
            }
            let message = NtfyMessage(payload)
            for (name, value) in message.headers { request.headers.add(name: name, value: value) }
            request.body = .bytes(ByteBuffer(string: message.body))
        }
        request.headers.add(name: "User-Agent", value: "bike-registry")
        do {
            let response = try await client.execute(request, timeout: .seconds(15))
            _ = try? await response.body.collect(upTo: 64 * 1024)
            switch response.status.code {
            case 200..<300: return .delivered
            case 410: return .gone
            default:
                let retryAfter = response.headers.first(name: "Retry-After").flatMap(TimeInterval.init)
                return .retry("HTTP \(response.status.code)", retryAfter: retryAfter)
            }
        } catch {
            return .retry("\(error)", retryAfter: nil)
        }
    }
}
