import ArgumentParser
import BikeRegistryMail
import Foundation

/// The mail relay's options, shared by `serve` and `check-mail`.
struct MailOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The mail relay, as smtp://HOST:587 (STARTTLS required) or smtps://HOST:465. Without it e-mail is off.",
            discussion: """
                The relay's certificate is verified against the system's authorities (or --smtp-ca-file). Plain SMTP \
                without TLS is refused, except to a relay on loopback (smtp://127.0.0.1:25, a local Postfix).
                """))
    var smtp: String?
    @Option(help: "The user name the relay's AUTH takes.") var smtpUser: String?
    @Option(
        help: ArgumentHelp(
            "A file holding the relay's password (its first line).",
            discussion: "Default: the systemd credential smtp-password ($CREDENTIALS_DIRECTORY/smtp-password)."))
    var smtpPasswordFile: String?
    @Option(help: "The authority that signed a private relay's certificate (PEM).") var smtpCaFile: String?
    @Option(help: "Who the messages come from, as \"FindMyBike <noreply@example.org>\" or an address alone.")
    var mailFrom: String?
    @Option(help: "Confirmation messages one bike may have sent in a day.") var confirmationsPerBikePerDay = 3
    @Option(help: "Confirmation messages one address may be sent in a day, for all bikes together.")
    var confirmationsPerAddressPerDay = 5

    func validate() throws {
        guard confirmationsPerBikePerDay >= 1, confirmationsPerAddressPerDay >= 1 else {
            throw ValidationError(
                "--confirmations-per-bike-per-day and --confirmations-per-address-per-day are at least 1")
        }
        guard smtp != nil else {
            if smtpUser != nil || smtpPasswordFile != nil || smtpCaFile != nil || mailFrom != nil {
                throw ValidationError(
                    "--smtp-user, --smtp-password-file, --smtp-ca-file and --mail-from go with --smtp")
            }
            return
        }
        guard let mailFrom else { throw ValidationError("--smtp needs --mail-from \"Name <address>\"") }
        guard MailSender(mailFrom) != nil else {
            throw ValidationError("--mail-from is \"Name <local@domain.example>\" or an address alone, in ASCII")
        }
        if let smtpCaFile, !FileManager.default.isReadableFile(atPath: smtpCaFile) {
            throw ValidationError("--smtp-ca-file \(smtpCaFile) cannot be read")
        }
    }

    /// The relay, or nil when e-mail is off. `timeout` bounds one message's whole exchange.
    func relay(timeout: Duration = .seconds(14)) throws -> SMTPRelay? {
        guard let smtp, let from = mailFrom.flatMap(MailSender.init) else { return nil }
        do {
            return try SMTPRelay(
                url: smtp, user: smtpUser, password: try password(), caFile: smtpCaFile, from: from, timeout: timeout)
        } catch let error as SMTPRelay.ConfigurationError {
            throw ValidationError(error.description)
        }
    }

    /// The password: from --smtp-password-file, else the systemd credential, else none (a relay without AUTH).
    private func password() throws -> String? {
        let credential = ProcessInfo.processInfo.environment["CREDENTIALS_DIRECTORY"].map { $0 + "/smtp-password" }
        guard
            let path = smtpPasswordFile ?? credential.flatMap({ FileManager.default.fileExists(atPath: $0) ? $0 : nil })
        else { return nil }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw ValidationError("the relay's password file \(path) cannot be read")
        }
        let line = text.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init) ?? ""
        guard !line.isEmpty else { throw ValidationError("the relay's password file \(path) is empty") }
        return line
    }
}
