import BikeRegistryCore
import BikeRegistryMail
import Foundation

/// E-mail, through the operator's relay (`MailDelivery`): an address is confirmed by a message of its own before
/// anything else goes to it (`EmailChanges`), and the relay's refusal for good marks it failing, shown on the
/// owner's page, until it is saved again.
struct EmailChannel: NotificationChannelType {
    /// Nil when the registry has no mail relay: an address may still be removed, and nothing is sent.
    let mail: MailDelivery?

    var id: NotificationChannel { .email }
    var field: String { "email" }
    var label: String { "E-mail address (a message asks it to confirm first)" }
    var confirmsTargets: Bool { true }
    var whenRefused: TargetRefusal { .markFailing }

    func parsed(_ typed: String) -> Result<String, FieldError> {
        MailAddress(typed).map { .success($0.text) } ?? .failure(FieldError(EmailChanges.badAddress))
    }

    func refusal(for target: String) async -> String? { nil }

    /// libcurl bounds the exchange (SMTPRelay.timeout, under the deadline): a deadline cut here could not stop a
    /// transfer the relay then accepts, which the next attempt would send again.
    func attempt(_ notification: PendingNotification) async -> NotificationSender.Outcome {
        guard let mail else {
            return .retry(.init("e-mail is off: the registry has no mail relay (serve --smtp)"), retryAfter: 3600)
        }
        return await mail.attempt(notification)
    }

    func shown(_ notification: PendingNotification, payload: NotificationPayload, bike: Bike) -> String {
        mail?.composer.message(for: notification, bike: bike).map { "Subject: \($0.subject)\n\n" + $0.text } ?? ""
    }

    /// The address and where it stands; never its keys.
    func encode(_ target: NotificationTarget?, into container: inout KeyedEncodingContainer<AnyKey>) throws {
        try container.encode(target.flatMap(OwnerEmail.init).map(Shown.init), forKey: AnyKey(stringValue: field))
    }

    private struct Shown: Encodable {
        var address: String
        var status: String
        var failure: String?

        init(_ email: OwnerEmail) {
            address = email.address
            status = email.state.rawValue
            failure = email.failure
        }
    }
}
