/// A way a bike's messages reach its owner, by the name the database keeps it under (`notificationTarget.channel`
/// and `notification.channel`). A name is all the domain and the store know of a channel: how a target is checked,
/// saved, shown and sent to is the server's channel type (`BikeRegistryServer/Channels`), one file each, and what a
/// refusal for good does to a target is `TargetRefusal`, which that type names.
public struct NotificationChannel: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }

    public var description: String { rawValue }

    /// The channels whose targets were the bike's own columns before the target table (migration v11 moved them),
    /// and e-mail, whose address the store confirms (`changeEmail`).
    public static let webhook = NotificationChannel("webhook")
    public static let ntfy = NotificationChannel("ntfy")
    public static let email = NotificationChannel("email")
}
