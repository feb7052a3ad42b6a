/// A message's id, the webhook-id of its every attempt: what is owed (a visit's `bike.seen`, a report's reminder),
/// derived from what names it so that it is the same however often it is decided, and the channel it goes on. A
/// statement that writes one message for each of a bike's targets joins the two in SQL with the same `separator`.
package enum MessageID {
    /// The id of what is owed, before its channel: `msg_` and 24 hex digits.
    package static func owed(_ parts: [String]) -> String { Secrets.derivedID(prefix: "msg_", parts) }

    /// The id of what is owed, on one channel.
    package static func on(_ channel: NotificationChannel, owed: String) -> String {
        owed + separator + channel.rawValue
    }

    /// Between what is owed and the channel: neither an id's hex digits nor a channel's name hold it.
    package static let separator = "."
}
