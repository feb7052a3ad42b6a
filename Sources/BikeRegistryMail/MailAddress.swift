/// An e-mail address as an owner types it, held to the plain ASCII form every relay takes: `local@domain`, the local
/// part an RFC 5322 dot-atom, the domain DNS labels with at least one dot, 254 characters in all (the API's schema
/// says the same as a pattern). What it refuses (quoted local parts, comments, address literals, international
/// addresses) no owner needs, and each is a way to smuggle a second recipient or a header past a careless relay. A
/// local part past SMTP's 64 octets is the relay's to refuse, which marks the address failing. Pure: no lookup of the
/// domain, and nothing trimmed (the page trims what is typed).
public struct MailAddress: Sendable, Hashable, CustomStringConvertible {
    /// The local part as typed and the domain in lower case.
    public let text: String

    public var description: String { text }

    public init?(_ typed: String) {
        guard typed.utf8.count <= 254, let at = typed.lastIndex(of: "@") else { return nil }
        let local = typed[..<at]
        let domain = typed[typed.index(after: at)...].lowercased()
        guard !local.isEmpty, local.first != ".", local.last != ".", !local.contains(".."),
            local.unicodeScalars.allSatisfy(Self.isAtomCharacter),
            Self.isHostName(domain), domain.contains(".")
        else { return nil }
        text = local + "@" + domain
    }

    public var domain: Substring { text[text.index(after: text.lastIndex(of: "@")!)...] }

    /// RFC 5322's atext, and the dots between atoms.
    private static func isAtomCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9", ".": true
        default: "!#$%&'*+/=?^_`{|}~-".unicodeScalars.contains(scalar)
        }
    }

    /// Labels of letters, digits and hyphens, none empty or longer than 63, none starting or ending with a hyphen.
    static func isHostName(_ name: String) -> Bool {
        guard !name.isEmpty, name.utf8.count <= 253 else { return false }
        return name.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { label in
            !label.isEmpty && label.utf8.count <= 63 && label.first != "-" && label.last != "-"
                && label.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }
        }
    }
}

/// Who the registry's mail comes from: `FindMyBike <noreply@example.org>`, or an address alone.
public struct MailSender: Sendable, Equatable {
    public let name: String?
    public let address: MailAddress

    public init?(_ text: String) {
        let trimmed = text.trimmingWhitespace
        if trimmed.hasSuffix(">"), let open = trimmed.lastIndex(of: "<") {
            let name = trimmed[..<open].trimmingWhitespace
            guard
                let address = MailAddress(
                    String(trimmed[trimmed.index(after: open)..<trimmed.index(before: trimmed.endIndex)])),
                name.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7f && $0 != "\"" && $0 != "\\" })
            else { return nil }
            self.name = name.isEmpty ? nil : name
            self.address = address
        } else {
            guard let address = MailAddress(trimmed) else { return nil }
            name = nil
            self.address = address
        }
    }

    /// The From header's value: the name quoted (or RFC 2047-encoded when it is not ASCII) and the address.
    var header: String {
        guard let name else { return address.text }
        return MailHeader.phrase(name) + " <" + address.text + ">"
    }
}

extension StringProtocol {
    var trimmingWhitespace: String {
        var scalars = Substring(self).unicodeScalars[...]
        while let first = scalars.first, first.properties.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.properties.isWhitespace { scalars.removeLast() }
        return String(String.UnicodeScalarView(scalars))
    }
}
