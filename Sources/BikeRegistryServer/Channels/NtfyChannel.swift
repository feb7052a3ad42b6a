import BikeRegistryCore
import Foundation

/// An ntfy topic: a short text with a title, tags, a priority and a map link (`NtfyMessage`), published to the
/// owner's topic URL.
struct NtfyChannel: HTTPChannel {
    let http: HTTPDelivery

    var id: NotificationChannel { .ntfy }
    var field: String { "ntfy" }
    var label: String { "ntfy topic URL (for example https://ntfy.sh/your-secret-topic)" }

    func attempt(_ notification: PendingNotification) async -> NotificationSender.Outcome {
        guard let message = Self.message(notification.payload) else {
            return .retry(.init("unreadable payload"), retryAfter: 3600)
        }
        return await http.post(to: notification.target, headers: message.headers, body: message.body)
    }

    /// A report's notice or a sighting's payload as ntfy publishes it.
    static func message(_ payload: String) -> NtfyMessage? {
        if let notice = ReportNotice.decode(payload) { return NtfyMessage(notice) }
        return (try? NotificationPayload.decode(payload)).map(NtfyMessage.init)
    }

    func shown(_ notification: PendingNotification, payload: NotificationPayload, bike: Bike) -> String {
        let message = NtfyMessage(payload)
        return message.headers.map { "\($0.0): \($0.1)" }.joined(separator: "\n") + "\n\n" + message.body
    }
}
