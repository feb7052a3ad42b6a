/// Both programs' configuration files (beacond's `/etc/beacond/beacond.conf`, bike-registry's
/// `/etc/bike-registry/bike-registry.conf`): `key = value` lines, `#` comments, blank lines ignored, a key repeated
/// where it takes several values (`region`, `adapter`). Values may be wrapped in double quotes. What a key means is
/// each program's to say; this reads the lines.
///
/// Why not TOML or YAML: every setting is a scalar or a list of scalars, and a flat file is what Raspberry Pi
/// users already edit (`/boot/config.txt`, `/etc/default/*`); its parser is forty lines with nothing to
/// misread (no types inferred from spelling, no indentation).
public struct ConfigFile: Sendable {
    public struct Entry: Sendable, Equatable {
        public var key: String
        public var value: String
        /// 1-based line in the file; 0 for a command-line flag or an environment variable.
        public var line: Int
        /// The environment variable it came from, if it did.
        public var variable: String?

        public init(key: String, value: String, line: Int, variable: String? = nil) {
            self.key = key
            self.value = value
            self.line = line
            self.variable = variable
        }
    }

    public var entries: [Entry] = []
    /// Lines that are not `key = value`, with why.
    public var errors: [ConfigError] = []

    public init(entries: [Entry]) { self.entries = entries }

    /// The environment variable that sets a key, the same way in both programs: the program's prefix, then the key
    /// upper-cased with its dashes as underscores (`BEACOND_` and `station-id` → `BEACOND_STATION_ID`).
    public static func variable(for key: String, prefix: String) -> String {
        prefix + String(key.uppercased().map { $0 == "-" ? "_" : $0 })
    }

    public init(text: String) {
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = index + 1
            let trimmed = raw.trimmingSpaces
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            guard let equals = trimmed.firstIndex(of: "=") else {
                errors.append(ConfigError(key: String(trimmed.prefix(40)), line: line, reason: "expected key = value"))
                continue
            }
            let key = String(trimmed[..<equals]).trimmingSpaces
            var value = String(trimmed[trimmed.index(after: equals)...]).trimmingSpaces
            guard !key.isEmpty, key.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" }) else {
                errors.append(ConfigError(key: key, line: line, reason: "not a valid key"))
                continue
            }
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
                value = String(value.dropFirst().dropLast())
            }
            entries.append(Entry(key: key, value: value, line: line))
        }
    }
}

/// One thing wrong with the configuration: which key, where, and why.
public struct ConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    public var key: String
    /// The line in the file, nil for a command-line flag.
    public var line: Int?
    public var reason: String
    /// The environment variable the value came from, if it did.
    public var variable: String?

    /// What came from the file (a key, a value quoted in the reason) is kept printable: a file of binary garbage
    /// must not send escape sequences to the terminal or the journal.
    public init(key: String, line: Int? = nil, reason: String, variable: String? = nil) {
        self.key = key.escapingControlCharacters
        self.line = line
        self.reason = reason.escapingControlCharacters
        self.variable = variable
    }

    public var description: String {
        (variable.map { "\($0): " } ?? line.map { "line \($0): " } ?? "") + "\(key): \(reason)"
    }
}

extension StringProtocol {
    var trimmingSpaces: String {
        var text = Substring(self)
        while let first = text.first, first == " " || first == "\t" || first == "\r" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" || last == "\r" { text.removeLast() }
        return String(text)
    }
}

extension String {
    /// Control characters (C0, DEL, C1) and invalid UTF-8 (already U+FFFD) shown as `\u{1b}`: text from a file or a
    /// peer, made safe for a terminal or the journal.
    public var escapingControlCharacters: String {
        guard unicodeScalars.contains(where: \.isControl) else { return self }
        var result = ""
        for scalar in unicodeScalars {
            if scalar.isControl {
                result += "\\u{\(String(scalar.value, radix: 16))}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}

extension Unicode.Scalar {
    fileprivate var isControl: Bool { value < 0x20 || (0x7F..<0xA0).contains(value) }
}
