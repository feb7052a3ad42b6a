internal import CCurl
import Foundation

/// The operator's mail relay, reached through libcurl's SMTP: one connection and one transaction a message, with
/// TLS always (implicit on `smtps://`, STARTTLS required on `smtp://`) and the relay's certificate verified against
/// the system's authorities or `caFile`. Plain SMTP is allowed only to a relay on loopback, where nothing crosses a
/// network (libcurl still upgrades the connection when the relay offers STARTTLS).
///
/// libcurl's transfer blocks, so each runs on a thread of its own, never on Swift's cooperative pool (two threads
/// on a Raspberry Pi); `timeout` bounds the whole exchange.
public struct SMTPRelay: Sendable {
    public enum Security: String, Sendable {
        /// smtps://: TLS from the first byte (port 465).
        case implicitTLS
        /// smtp:// to any host: the relay must offer STARTTLS, or nothing is sent.
        case requiredSTARTTLS
        /// smtp:// to loopback: STARTTLS when offered.
        case loopback
    }

    public let url: String
    public let host: String
    public let security: Security
    public let user: String?
    let password: String?
    public let caFile: String?
    public let from: MailSender
    public let timeout: Duration

    public struct ConfigurationError: Error, CustomStringConvertible {
        public let description: String
    }

    public init(
        url: String, user: String?, password: String?, caFile: String?, from: MailSender,
        timeout: Duration = .seconds(30)
    ) throws {
        guard let parsed = URLComponents(string: url), let scheme = parsed.scheme?.lowercased(),
            let host = parsed.host, !host.isEmpty, parsed.path.isEmpty || parsed.path == "/",
            parsed.user == nil, parsed.password == nil, parsed.query == nil
        else {
            throw ConfigurationError(
                description: "--smtp \(url): give the relay as smtp://HOST:587 (STARTTLS) or smtps://HOST:465")
        }
        switch scheme {
        case "smtps": security = .implicitTLS
        case "smtp": security = Self.isLoopback(host) ? .loopback : .requiredSTARTTLS
        default:
            throw ConfigurationError(description: "--smtp \(url): the scheme must be smtp:// or smtps://")
        }
        if user != nil && password == nil {
            throw ConfigurationError(
                description:
                    "--smtp-user needs a password: --smtp-password-file, or the systemd credential smtp-password")
        }
        self.url = "\(scheme)://\(parsed.percentEncodedHost ?? host)\(parsed.port.map { ":\($0)" } ?? "")"
        self.host = host
        self.user = user
        self.password = password
        self.caFile = caFile
        self.from = from
        self.timeout = timeout
    }

    static func isLoopback(_ host: String) -> Bool {
        let bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        return bare == "localhost" || bare == "::1"
            || bare.hasPrefix("127.")
                && bare.split(separator: ".").count == 4 && bare.split(separator: ".").allSatisfy { UInt8($0) != nil }
    }

    /// What came of handing a message to the relay.
    public enum Outcome: Sendable, Equatable {
        /// The relay accepted it (250 after DATA): it is the relay's to deliver now.
        case accepted
        /// The relay refused it for good (a 5xx reply to the recipient or the message): the address fails.
        case refused(String)
        /// Nothing was decided: the relay could not be reached, TLS failed, or it answered 4xx. Try again later.
        case retry(String)
        /// The relay refused the registry's own user name or password, or its sender: the operator's to fix, not the
        /// owner's address. Tried again later.
        case relayRefused(String)
    }

    public func send(_ message: MailMessage) async -> Outcome {
        await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: self.transfer(message)) }
            thread.name = "smtp"
            thread.start()
        }
    }

    private static let initialised: Bool = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK

    private func transfer(_ message: MailMessage) -> Outcome {
        guard Self.initialised, let curl = curl_easy_init() else { return .retry("libcurl could not start") }
        defer { curl_easy_cleanup(curl) }
        let recipients = curl_slist_append(nil, "<\(message.to.text)>")
        defer { curl_slist_free_all(recipients) }
        var errors = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        let rendered = Array(message.rendered().utf8)
        let milliseconds = Int(timeout.components.seconds) * 1000
        return rendered.withUnsafeBufferPointer { bytes in
            errors.withUnsafeMutableBufferPointer { errorBuffer in
                var upload = beacond_curl_upload(
                    bytes: UnsafeRawPointer(bytes.baseAddress!).assumingMemoryBound(to: CChar.self),
                    length: bytes.count, offset: 0)
                var set = CURLE_OK
                func long(_ option: CURLoption, _ value: Int) {
                    if set == CURLE_OK { set = beacond_curl_set_long(curl, option, value) }
                }
                func string(_ option: CURLoption, _ value: String?) {
                    if set == CURLE_OK, let value { set = beacond_curl_set_string(curl, option, value) }
                }
                string(CURLOPT_URL, url)
                long(CURLOPT_NOSIGNAL, 1)
                long(CURLOPT_PROTOCOLS, Int(CURLPROTO_SMTP | CURLPROTO_SMTPS))
                long(CURLOPT_USE_SSL, Int(security == .loopback ? CURLUSESSL_TRY.rawValue : CURLUSESSL_ALL.rawValue))
                long(CURLOPT_SSL_VERIFYPEER, 1)
                long(CURLOPT_SSL_VERIFYHOST, 2)
                string(CURLOPT_CAINFO, caFile)
                string(CURLOPT_USERNAME, user)
                string(CURLOPT_PASSWORD, password)
                string(CURLOPT_MAIL_FROM, "<\(from.address.text)>")
                long(CURLOPT_TIMEOUT_MS, milliseconds)
                long(CURLOPT_CONNECTTIMEOUT_MS, min(milliseconds, 10_000))
                if set == CURLE_OK { set = beacond_curl_set_list(curl, CURLOPT_MAIL_RCPT, recipients) }
                if set == CURLE_OK { set = beacond_curl_set_buffer(curl, CURLOPT_ERRORBUFFER, errorBuffer.baseAddress) }
                if set == CURLE_OK { set = beacond_curl_set_upload(curl, &upload) }
                guard set == CURLE_OK else {
                    return .retry("libcurl refused an option: \(String(cString: curl_easy_strerror(set)))")
                }
                let result = curl_easy_perform(curl)
                let reply = beacond_curl_response_code(curl)
                let detail =
                    errorBuffer.baseAddress.map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
                    ?? String(cString: curl_easy_strerror(result))
                return Self.outcome(result: result, reply: reply, detail: detail)
            }
        }
    }

    /// libcurl's result and the relay's last reply code, as the worker needs them.
    static func outcome(result: CURLcode, reply: Int, detail: String) -> Outcome {
        if result == CURLE_OK { return .accepted }
        if result == CURLE_LOGIN_DENIED || result == CURLE_AUTH_ERROR {
            return .relayRefused("the relay refused the user name or password (\(detail))")
        }
        // libcurl says which command a reply refused: a sender refused is the operator's configuration.
        if detail.hasPrefix("MAIL failed") { return .relayRefused("the relay refused the sender (\(detail))") }
        switch reply {
        case 500..<600: return .refused("SMTP \(reply): \(detail)")
        case 400..<500: return .retry("SMTP \(reply): \(detail)")
        default: return .retry(detail)
        }
    }
}
