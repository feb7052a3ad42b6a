import BeaconPOSIX
public import Logging

#if canImport(Glibc)
import Glibc
#endif

/// Log lines on stderr. Under systemd (stderr is the journal) each line starts with its syslog priority,
/// `<6>`, which journald turns into the entry's priority, so `journalctl -p warning` works; in a terminal
/// the level is spelled out instead. One write(2) per line, so lines from different threads never mix.
public struct JournalLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level
    private let label: String
    private let priorities: Bool

    /// `priorities`: prefix `<N>`; the daemon passes true when `$JOURNAL_STREAM` is set.
    public init(label: String, level: Logger.Level, priorities: Bool) {
        self.label = label
        self.logLevel = level
        self.priorities = priorities
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var line = priorities ? "<\(Self.priority(event.level))>" : "beacond \(event.level): "
        line += "\(event.message)"
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        for (key, value) in merged.sorted(by: { $0.key < $1.key }) {
            line += " \(key)=\(Self.quoted("\(value)"))"
        }
        line += "\n"
        var bytes = Array(line.utf8)
        _ = retryingOnInterrupt { bytes.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) } }
    }

    /// syslog(3) priorities, as sd-daemon(3) defines the prefixes.
    static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    /// Values with spaces or quotes are quoted so a line still splits into `key=value` pairs.
    static func quoted(_ value: String) -> String {
        guard value.isEmpty || value.contains(where: { $0 == " " || $0 == "\"" || $0 == "=" || $0.isNewline }) else {
            return value
        }
        var escaped = "\""
        for character in value {
            switch character {
            case "\"": escaped += "\\\""
            case "\\": escaped += "\\\\"
            case "\n": escaped += "\\n"
            default: escaped.append(character)
            }
        }
        return escaped + "\""
    }
}
