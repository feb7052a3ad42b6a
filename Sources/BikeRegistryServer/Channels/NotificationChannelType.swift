import BikeRegistryCore
import Foundation

/// One way a bike's messages reach its owner: everything the server knows of a channel, in one type, so that a
/// channel is one file and one entry in `NotificationChannels` (docs/architecture.md, "Adding a notification
/// channel"). The store knows a channel only by its name (`NotificationChannel`); the API's `notify` object, the
/// page's fields, "send a test", the worker and the 410 rule all follow from these members.
protocol NotificationChannelType: Sendable {
    /// Its name, as the database keeps targets and messages under it.
    var id: NotificationChannel { get }
    /// Its name in the API's `notify` object and the page's form.
    var field: String { get }
    /// The page's label for its field.
    var label: String { get }
    /// Whether its target is confirmed by a message of its own (e-mail's) rather than saved confirmed.
    var confirmsTargets: Bool { get }
    /// What a refusal for good does to its target: only a channel that can be refused for good says so here.
    var whenRefused: TargetRefusal { get }

    /// The target as the owner typed it, checked for its shape (as docs/registry-api.yaml gives it): the text to
    /// save, or the reason it is refused.
    func parsed(_ typed: String) -> Result<String, FieldError>
    /// Why a target of the right shape may not be saved or sent to now (a host that is not public); nil when it may.
    func refusal(for target: String) async -> String?
    /// One attempt at the message, within the channel's own deadline.
    func attempt(_ notification: PendingNotification) async -> NotificationSender.Outcome
    /// The message as "send a test" shows the owner what was sent.
    func shown(_ notification: PendingNotification, payload: NotificationPayload, bike: Bike) -> String
    /// The bike's target in the API's `notify` object.
    func encode(_ target: NotificationTarget?, into container: inout KeyedEncodingContainer<AnyKey>) throws
}

extension NotificationChannelType {
    var confirmsTargets: Bool { false }

    func encode(_ target: NotificationTarget?, into container: inout KeyedEncodingContainer<AnyKey>) throws {
        try container.encode(target?.address, forKey: AnyKey(stringValue: field))
    }
}

/// The channels a registry sends on, in the order the owner's page and "send a test" list them: a channel is one
/// entry here.
struct NotificationChannels: Sendable {
    let all: [any NotificationChannelType]

    /// The registry's own: ntfy and webhooks over `http`, e-mail through `mail` when a relay is configured.
    static func standard(http: HTTPDelivery, mail: MailDelivery?) -> NotificationChannels {
        NotificationChannels(all: [NtfyChannel(http: http), WebhookChannel(http: http), EmailChannel(mail: mail)])
    }

    func channel(_ id: NotificationChannel) -> (any NotificationChannelType)? { all.first { $0.id == id } }

    /// The channels whose targets are saved as given (not confirmed by a message of their own).
    var direct: [any NotificationChannelType] { all.filter { !$0.confirmsTargets } }
}
