import BikeRegistryCore
import Foundation

/// A webhook: the message's JSON posted to the owner's URL, signed as Standard Webhooks signs it with the bike's
/// secret, under the same `webhook-id` on every attempt.
struct WebhookChannel: HTTPChannel {
    let http: HTTPDelivery

    var id: NotificationChannel { .webhook }
    var field: String { "webhook" }
    var label: String { "Webhook URL" }

    func attempt(_ notification: PendingNotification) async -> NotificationSender.Outcome {
        let timestamp = Int(Date().timeIntervalSince1970)
        guard
            let signature = WebhookSignature.sign(
                id: notification.id, timestamp: timestamp, body: notification.payload,
                secret: notification.webhookSecret)
        else { return .retry(.init("the bike's webhook secret is malformed"), retryAfter: nil) }
        return await http.post(
            to: notification.target,
            headers: [
                ("Content-Type", "application/json"), ("webhook-id", notification.id),
                ("webhook-timestamp", String(timestamp)), ("webhook-signature", signature),
            ], body: notification.payload)
    }

    func shown(_ notification: PendingNotification, payload: NotificationPayload, bike: Bike) -> String {
        "webhook-id: \(notification.id)\nwebhook-signature: v1,…\n\n" + notification.payload
    }
}
