import BeaconTestSupport
import BikeRegistryMail
import Foundation
import Testing

/// bike-registry's mail through libcurl to a real relay on loopback (aiosmtpd, STARTTLS and AUTH required): what
/// arrives, read by Python's MIME parser, and how each of the relay's answers is taken.
@Suite(.timeLimit(.minutes(20))) struct MailRelayTests {
    let from = MailSender("FindMyBike <noreply@registry.example.org>")!

    func relay(_ mail: MailRelay, password: String = MailRelay.password, caFile: String?? = nil) throws -> SMTPRelay {
        try SMTPRelay(
            url: mail.url, user: MailRelay.user, password: password, caFile: caFile ?? mail.caFile, from: from,
            timeout: .seconds(10))
    }

    func message(to address: String, key: String = "msg_1") -> MailMessage {
        MailMessage(
            from: from, to: MailAddress(address)!, subject: "Your red Triumph was seen at Café Noir",
            date: Date(timeIntervalSince1970: 1_795_795_200), messageKey: key,
            text: "Plain words, ünïcode.\nTwo lines.",
            html: "<p>Plain words, <b>ünïcode</b>.</p>",
            unsubscribeURL: "https://registry.example.org/unsubscribe/u_abc")
    }

    @Test func aMessageArrivesOverSTARTTLSWithAUTHWellFormed() async throws {
        let mail = try MailRelay()
        let outcome = try await relay(mail).send(message(to: "owner@example.com"))
        #expect(outcome == .accepted)
        let received = try mail.messages()
        try #require(received.count == 1)
        let got = received[0]
        #expect(got.envelope.tls && got.envelope.login == MailRelay.user)
        #expect(got.envelope.mailFrom == "noreply@registry.example.org" && got.to == "owner@example.com")
        #expect(got.defects.isEmpty && got.crlf)
        #expect(got.contentType == "multipart/alternative")
        #expect(got.header("Subject") == "Your red Triumph was seen at Café Noir")
        #expect(got.header("From") == "FindMyBike <noreply@registry.example.org>")
        #expect(got.header("Message-ID") == "<msg_1@registry.example.org>")
        #expect(got.header("Date") == "Fri, 27 Nov 2026 16:00:00 +0000")
        #expect(got.header("Auto-Submitted") == "auto-generated")
        #expect(got.header("List-Unsubscribe") == "<https://registry.example.org/unsubscribe/u_abc>")
        #expect(got.header("List-Unsubscribe-Post") == "List-Unsubscribe=One-Click")
        #expect(got.part("text/plain") == "Plain words, ünïcode.\nTwo lines.")
        #expect(got.part("text/html") == "<p>Plain words, <b>ünïcode</b>.</p>")
    }

    @Test func aRelayOnImplicitTLSTakesItToo() async throws {
        let mail = try MailRelay(implicitTLS: true)
        #expect(mail.url.hasPrefix("smtps://"))
        let relay = try relay(mail)
        #expect(relay.security == .implicitTLS)
        let outcome = await relay.send(message(to: "owner@example.com"))
        #expect(outcome == .accepted, "\(outcome)")
        let received = try mail.messages()
        #expect(received.count == 1 && received.first?.envelope.tls == true && received.first?.envelope.login != nil)
    }

    @Test func aWrongPasswordIsTheRelaysRefusalNotTheAddresss() async throws {
        let mail = try MailRelay()
        let outcome = try await relay(mail, password: "wrong").send(message(to: "owner@example.com"))
        guard case .relayRefused(let reason) = outcome else {
            Issue.record("\(outcome)")
            return
        }
        #expect(reason.contains("user name or password"))
        #expect(try mail.messages().isEmpty)
    }

    @Test func aRefusedRecipientIsPermanentAndADeferredOneIsRetried() async throws {
        let mail = try MailRelay()
        let relay = try relay(mail)
        let refused = await relay.send(message(to: "refuse-me@example.com"))
        guard case .refused(let reason) = refused else {
            Issue.record("\(refused)")
            return
        }
        #expect(reason.hasPrefix("SMTP 550"))
        let deferred = await relay.send(message(to: "defer-me@example.com"))
        guard case .retry(let why) = deferred else {
            Issue.record("\(deferred)")
            return
        }
        #expect(why.hasPrefix("SMTP 451"))
        #expect(try mail.messages().isEmpty)
    }

    @Test func aRelayWhoseCertificateIsNotTrustedOrThatIsDownGetsNothing() async throws {
        let mail = try MailRelay()
        // The system's authorities did not sign the test relay's certificate.
        let untrusted = try await relay(mail, caFile: .some(nil)).send(message(to: "owner@example.com"))
        guard case .retry = untrusted else {
            Issue.record("\(untrusted)")
            return
        }
        mail.stop()
        let down = try await relay(mail).send(message(to: "owner@example.com"))
        guard case .retry = down else {
            Issue.record("\(down)")
            return
        }
        try mail.start()
        #expect(try await relay(mail).send(message(to: "owner@example.com")) == .accepted)
        #expect(try mail.messages().count == 1)
    }

    @Test func theRelaysURLIsCheckedAtStart() throws {
        #expect(
            try SMTPRelay(url: "smtp://mail.example.org:587", user: nil, password: nil, caFile: nil, from: from)
                .security == .requiredSTARTTLS)
        #expect(
            try SMTPRelay(url: "smtps://mail.example.org:465", user: nil, password: nil, caFile: nil, from: from)
                .security == .implicitTLS)
        #expect(
            try SMTPRelay(url: "smtp://[::1]:25", user: nil, password: nil, caFile: nil, from: from)
                .security == .loopback)
        for bad in ["http://mail.example.org", "mail.example.org:587", "smtp://user:pw@mail.example.org", "smtp://"] {
            #expect(throws: SMTPRelay.ConfigurationError.self) {
                try SMTPRelay(url: bad, user: nil, password: nil, caFile: nil, from: from)
            }
        }
        #expect(throws: SMTPRelay.ConfigurationError.self) {
            try SMTPRelay(url: "smtp://mail.example.org", user: "u", password: nil, caFile: nil, from: from)
        }
    }

    @Test func addressesAreThePlainFormOnly() {
        #expect(MailAddress("Owner.Name+bikes@Example.ORG")?.text == "Owner.Name+bikes@example.org")
        for bad in [
            "", " owner@example.org", "owner", "owner@", "@example.org", "owner@localhost", "a b@example.org",
            "owner@exa mple.org",
            "owner@example.org\r\nBcc: x@y.org", "\"quoted\"@example.org", "owner@[127.0.0.1]", "ówner@example.org",
            "owner@example..org", ".owner@example.org", "owner@-example.org", "a,b@example.org", "a<b@example.org",
        ] {
            #expect(MailAddress(bad) == nil, "\(bad)")
        }
    }

    @Test func aHeaderCannotBeSmuggledThroughTheSubject() throws {
        var mail = message(to: "owner@example.com")
        mail.subject = "Seen\r\nBcc: victim@example.net"
        let rendered = mail.rendered()
        #expect(!rendered.contains("\r\nBcc:"))
        #expect(rendered.contains("Subject: Seen  Bcc: victim@example.net\r\n"))
    }
}
