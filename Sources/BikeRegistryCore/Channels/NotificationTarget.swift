/// Where a bike's messages go on one channel: a row of the target table, one per bike and channel.
public struct NotificationTarget: Sendable, Equatable {
    public enum State: String, Sendable {
        /// Asked to confirm (an e-mail address): it is sent its confirmation and nothing else until it does.
        case unconfirmed
        /// Messages go to it. A target that needs no confirmation is saved confirmed.
        case confirmed
        /// Refused for good (the mail relay's 5xx reply): nothing more goes to it until its owner saves it again.
        case failing
    }

    public var channel: NotificationChannel
    /// The URL or address the owner gave.
    public var address: String
    public var state: State
    /// Why it is failing, as the refusal said.
    public var failure: String?
    /// The key of a one-click unsubscribe link (RFC 8058) for a target whose messages carry one (e-mail's); random,
    /// new with each target.
    public var unsubscribeKey: String?

    public init(
        channel: NotificationChannel, address: String, state: State = .confirmed, failure: String? = nil,
        unsubscribeKey: String? = nil
    ) {
        self.channel = channel
        self.address = address
        self.state = state
        self.failure = failure
        self.unsubscribeKey = unsubscribeKey
    }
}

/// What a channel's refusal for good does to the target it refused (the channel's type names which).
public enum TargetRefusal: Sendable, Equatable {
    /// The target is gone (an HTTP endpoint's 410): it is removed, and its owner may save another.
    case remove
    /// The target is kept, marked failing with the refusal, so its owner's page says why nothing arrives.
    case markFailing
}
