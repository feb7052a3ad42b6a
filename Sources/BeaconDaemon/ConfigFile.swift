/// beacond's configuration file: `key = value` lines, `#` comments, blank lines ignored, a key repeated where
/// it takes several values (`region`, `adapter`). Values may be wrapped in double quotes.
///
/// Why not TOML or YAML: every setting is a scalar or a list of scalars, and a flat file is what Raspberry Pi
/// users already edit (`/boot/config.txt`, `/etc/default/*`); its parser is forty lines with nothing to
/// misread (no types inferred from spelling, no indentation).
public struct ConfigFile: Sendable {
    public struct Entry: Sendable, Equatable {
        public var key: String
        public var value: String
        /// 1-based line in the file; 0 for a command-line flag.
        public var line: Int

        public init(key: String, value: String, line: Int) {
            self.key = key
            self.value = value
            self.line = line
        }
    }

    public var entries: [Entry] = []
    /// Lines that are not `key = value`, with why.
    public var errors: [ConfigError] = []

    public init(entries: [Entry]) { self.entries = entries }

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

    public init(key: String, line: Int? = nil, reason: String) {
        self.key = key
        self.line = line
        self.reason = reason
    }

    public var description: String {
        (line.map { "line \($0): " } ?? "") + "\(key): \(reason)"
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
