public import Foundation

/// A message owed to an owner on one channel, with what delivering it needs.
public struct PendingNotification: Sendable, Equatable {
    public typealias Channel = NotificationChannel

    /// The webhook-id: the same on every attempt.
    public var id: String
    public var bikeId: String
    public var channel: Channel
    public var target: String
    public var payload: String
    public var attempts: Int
    /// The bike's `whsec_` secret, for signing.
    public var webhookSecret: String
    public var createdAt: Date

    public init(
        id: String, bikeId: String, channel: Channel, target: String, payload: String, attempts: Int,
        webhookSecret: String, createdAt: Date
    ) {
        self.id = id
        self.bikeId = bikeId
        self.channel = channel
        self.target = target
        self.payload = payload
        self.attempts = attempts
        self.webhookSecret = webhookSecret
        self.createdAt = createdAt
    }
}
