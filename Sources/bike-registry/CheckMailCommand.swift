import ArgumentParser
import BikeRegistryMail
import Foundation

/// `bike-registry check-mail ADDRESS`: sends one test message through the relay `serve` would use, and says what
/// came of it, with a failing exit status when the relay did not accept it. For setting up, and for a unit's
/// ExecStartPre= or a monitoring check; nothing is written to the database.
struct CheckMailCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-mail",
        abstract: "Send a test message through the mail relay, and fail unless it accepts it.",
        discussion: "Give the same relay options as serve. Exit status 0: the relay took the message; 1: it did not.")

    @OptionGroup var mail: MailOptions
    @Argument(help: "The address to send the test message to.") var address: String

    func validate() throws {
        guard mail.smtp != nil else { throw ValidationError("check-mail needs --smtp and --mail-from") }
        guard MailAddress(address) != nil else {
            throw ValidationError("\(address) is not an address this registry can send to (local@domain.example)")
        }
    }

    func run() async throws {
        guard let relay = try mail.relay(timeout: .seconds(30)), let to = MailAddress(address) else { return }
        let now = Date()
        let message = MailMessage(
            from: relay.from, to: to, subject: "A test from bike-registry", date: now,
            messageKey: "check-\(Int(now.timeIntervalSince1970))-\(UInt32.random(in: 0...UInt32.max))",
            text: "This message shows that bike-registry can send mail through \(relay.url).\n", html: nil,
            unsubscribeURL: nil)
        switch await relay.send(message) {
        case .accepted:
            print("check-mail: \(relay.url) accepted a test message for \(to)")
        case .refused(let reason), .retry(let reason), .relayRefused(let reason):
            FileHandle.standardError.write(Data("check-mail: \(relay.url) did not take the message: \(reason)\n".utf8))
            throw ExitCode.failure
        }
    }
}
