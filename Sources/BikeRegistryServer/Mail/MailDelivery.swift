import BikeRegistryCore
import BikeRegistryMail
import BikeRegistryStore
import Foundation
import Logging
import NIOConcurrencyHelpers

/// One attempt to hand a notification to the relay as e-mail, for the notification worker (which retries, backs
/// off and survives restarts as it does for webhooks) and the owner page's test.
///
/// A refusal of the registry's own credentials or sender is the operator's to fix: it is logged once as an error,
/// until a message gets through again, rather than once a message, and the messages wait (retried) rather than fail.
final class MailDelivery: Sendable {
    let relay: SMTPRelay
    let composer: MailComposer
    let database: any RegistryStore
    let logger: Logger
    /// Whether the relay's refusal of the registry is logged already.
    private let refusalLogged = NIOLockedValueBox(false)

    init(settings: MailSettings, publicURL: String, database: any RegistryStore, logger: Logger) {
        relay = settings.relay
        composer = MailComposer(from: settings.relay.from, publicURL: publicURL)
        self.database = database
        self.logger = logger
    }

    func attempt(_ notification: PendingNotification) async -> NotificationSender.Outcome {
        let bike: Bike?
        do {
            bike = try await database.bike(id: notification.bikeId)
        } catch {
            return .retry(.init("the database could not be read", detail: "\(error)"), retryAfter: nil)
        }
        guard let message = composer.message(for: notification, bike: bike) else {
            return .refused(.init("this message cannot be written as e-mail (no bike or address for it)"))
        }
        switch await relay.send(message) {
        case .accepted:
            if refusalLogged.withLockedValue({ logged in
                defer { logged = false }
                return logged
            }) {
                logger.notice("the mail relay accepts the registry's messages again")
            }
            return .delivered
        case .refused(let reason):
            return .refused(.init("the relay refused the address (\(reason))"))
        case .retry(let reason):
            return .retry(.init("the relay could not take it now", detail: reason), retryAfter: nil)
        case .relayRefused(let reason):
            if refusalLogged.withLockedValue({ logged in
                defer { logged = true }
                return !logged
            }) {
                logger.error(
                    "mail relay \(relay.url) refuses the registry: \(reason). Mail waits until this is fixed (bike-registry check-mail tests it)."
                )
            }
            return .retry(.init("the relay refused the registry's login", detail: reason), retryAfter: nil)
        }
    }
}
