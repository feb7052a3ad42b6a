public import Foundation

/// One message as RFC 5322 and MIME write it: the headers a well-run sender puts on automatic mail, and a
/// multipart/alternative body of plain text and HTML. Pure: the same inputs give the same bytes, so a retry sends
/// exactly what the first attempt did (the `Message-ID` and `Date` come from the notification, not the attempt).
public struct MailMessage: Sendable, Equatable {
    public var from: MailSender
    public var to: MailAddress
    public var subject: String
    public var date: Date
    /// The left part of the `Message-ID`; the sender's domain is its right part.
    public var messageKey: String
    public var text: String
    /// Nil for a message of plain text alone.
    public var html: String?
    /// RFC 8058's one-click URL; nil for a message that is not a subscription (the confirmation).
    public var unsubscribeURL: String?

    public init(
        from: MailSender, to: MailAddress, subject: String, date: Date, messageKey: String, text: String,
        html: String?, unsubscribeURL: String?
    ) {
        self.from = from
        self.to = to
        self.subject = subject
        self.date = date
        self.messageKey = messageKey
        self.text = text
        self.html = html
        self.unsubscribeURL = unsubscribeURL
    }

    public var messageID: String { "<\(MailHeader.token(messageKey))@\(from.address.domain)>" }

    /// The whole message, lines ended by CRLF as SMTP's DATA carries them.
    public func rendered() -> String {
        var headers: [(String, String)] = [
            ("From", from.header),
            ("To", to.text),
            ("Subject", MailHeader.unstructured(subject)),
            ("Date", MailHeader.date(date)),
            ("Message-ID", messageID),
            ("MIME-Version", "1.0"),
            // RFC 3834: no auto-responder answers it, and well-behaved ones do not reply to it.
            ("Auto-Submitted", "auto-generated"),
        ]
        if let unsubscribeURL {
            headers.append(("List-Unsubscribe", "<" + MailHeader.token(unsubscribeURL) + ">"))
            headers.append(("List-Unsubscribe-Post", "List-Unsubscribe=One-Click"))
        }
        var lines = [String]()
        func part(_ type: String, _ body: String) {
            lines.append("Content-Type: \(type); charset=utf-8")
            lines.append("Content-Transfer-Encoding: base64")
            lines.append("")
            lines.append(contentsOf: MailHeader.base64Lines(body))
        }
        if let html {
            // The boundary is made from the message's key, so it is the same on every attempt; base64 parts can never
            // contain it (it has characters base64 has not).
            let boundary = "=_part_" + MailHeader.token(messageKey)
            headers.append(("Content-Type", "multipart/alternative; boundary=\"\(boundary)\""))
            lines += headers.map { "\($0): \($1)" }
            lines.append("")
            lines.append("--" + boundary)
            part("text/plain", text)
            lines.append("--" + boundary)
            part("text/html", html)
            lines.append("--" + boundary + "--")
        } else {
            lines += headers.map { "\($0): \($1)" }
            part("text/plain", text)
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }
}

/// The pieces of header syntax the messages need.
enum MailHeader {
    /// Text with every control character (CR and LF above all: a header's end) made a space.
    static func flattened(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7f ? " " : $0 }))
    }

    /// An unstructured value (the Subject): as it is when printable ASCII, otherwise RFC 2047 encoded words of UTF-8
    /// in base64, each short enough for a 78-character line and none splitting a character.
    static func unstructured(_ text: String) -> String {
        let flat = flattened(text)
        if flat.utf8.allSatisfy({ (0x20..<0x7f).contains($0) }) && flat.utf8.count <= 900 { return flat }
        var words: [String] = []
        var chunk = ""
        for character in flat {
            if chunk.utf8.count + character.utf8.count > 45 {
                words.append(chunk)
                chunk = ""
            }
            chunk.append(character)
        }
        if !chunk.isEmpty { words.append(chunk) }
        return words.map { "=?UTF-8?B?" + Data($0.utf8).base64EncodedString() + "?=" }.joined(separator: "\r\n ")
    }

    /// A display name: quoted when ASCII, encoded words otherwise.
    static func phrase(_ text: String) -> String {
        let flat = flattened(text)
        if flat.utf8.allSatisfy({ (0x20..<0x7f).contains($0) }) {
            return "\"" + flat.replacingOccurrences(of: "\\", with: "").replacingOccurrences(of: "\"", with: "") + "\""
        }
        return unstructured(flat)
    }

    /// A value that must not carry anything but printable ASCII without spaces or angle brackets (a URL, a key).
    static func token(_ text: String) -> String {
        String(
            String.UnicodeScalarView(
                text.unicodeScalars.filter { (0x21..<0x7f).contains($0.value) && $0 != "<" && $0 != ">" }))
    }

    /// RFC 5322's date-time in UTC: `Fri, 27 Nov 2026 16:05:09 +0000`.
    static func date(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second, .weekday], from: date)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ n: Int?) -> String { n.map { $0 < 10 ? "0\($0)" : "\($0)" } ?? "00" }
        return "\(days[(c.weekday ?? 1) - 1]), \(two(c.day)) \(months[(c.month ?? 1) - 1]) \(c.year ?? 1970) "
            + "\(two(c.hour)):\(two(c.minute)):\(two(c.second)) +0000"
    }

    /// A body in base64, 76 characters a line (RFC 2045).
    static func base64Lines(_ text: String) -> [String] {
        let encoded = Data(text.utf8).base64EncodedString()
        var lines: [String] = []
        var start = encoded.startIndex
        while start < encoded.endIndex {
            let end = encoded.index(start, offsetBy: 76, limitedBy: encoded.endIndex) ?? encoded.endIndex
            lines.append(String(encoded[start..<end]))
            start = end
        }
        return lines
    }
}
