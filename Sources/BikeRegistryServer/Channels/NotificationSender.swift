import BikeRegistryCore
import Foundation

/// One attempt to deliver a message on its channel, and what came of it. The notification worker's deliveries and
/// the owner page's "send a test" both go through it, so the test is what a real message would meet.
struct NotificationSender: Sendable {
    let channels: NotificationChannels
    /// The longest one attempt takes (an HTTP channel's whole exchange, the mail relay's transfer under it).
    let deadline: Duration

    /// Why an attempt failed: as the owner may read it, and in full for the operator's log.
    struct Failure: Sendable, Equatable {
        var shown: String
        var detail: String

        init(_ shown: String, detail: String? = nil) {
            self.shown = shown
            self.detail = detail ?? shown
        }
    }

    enum Outcome: Sendable, Equatable {
        case delivered
        /// The endpoint answered 410: the target is gone.
        case gone
        case retry(Failure, retryAfter: TimeInterval?)
        /// Refused for good (the mail relay's 5xx): the target fails.
        case refused(Failure)

        /// The answer as the domain decides on it (`DeliveryStep`), in the owner's words.
        var answer: DeliveryStep.Answer {
            switch self {
            case .delivered: .delivered
            case .gone: .refusedForGood(reason: "the endpoint answered 410 Gone")
            case .refused(let failure): .refusedForGood(reason: failure.shown)
            case .retry(let failure, let retryAfter): .failed(reason: failure.shown, retryAfter: retryAfter)
            }
        }

        /// What failed, in full for the log.
        var failure: Failure? {
            switch self {
            case .delivered, .gone: nil
            case .refused(let failure), .retry(let failure, _): failure
            }
        }
    }

    func attempt(_ notification: PendingNotification) async -> Outcome {
        guard let channel = channels.channel(notification.channel) else {
            return .retry(Failure("this registry sends nothing on \(notification.channel) now"), retryAfter: 3600)
        }
        return await channel.attempt(notification)
    }
}
