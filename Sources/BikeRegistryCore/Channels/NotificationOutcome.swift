public import Foundation

/// What became of one attempt to deliver a notification, as the store writes it. Nothing of HTTP or SMTP: the
/// channel's sender says what its answer means, and the channel's type what a refusal for good does to its target.
public enum NotificationOutcome: Sendable, Equatable {
    case delivered
    case retry(at: Date, error: String)
    case abandon(error: String)
    /// The target refused the message for good (a 410, the relay's 5xx): every message still owed to it on its channel
    /// is abandoned, and the bike's target, if it is still that one, is removed or marked failing as `refusal` says,
    /// so nothing more goes to it.
    case refused(TargetRefusal, error: String)
}
