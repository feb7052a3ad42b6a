public import BikeRegistryCore
public import BikeRegistryMail
import BikeRegistryStore

/// `serve --smtp …`: e-mail to owners is on, through this relay, within these limits. Without it e-mail is off: the
/// pages do not offer it and the API refuses an address.
public struct MailSettings: Sendable {
    public var relay: SMTPRelay
    public var limits: EmailLimits

    public init(relay: SMTPRelay, limits: EmailLimits = EmailLimits()) {
        self.relay = relay
        self.limits = limits
    }
}
