public import ArgumentParser
import BeaconCapture
import BeaconDaemon
import BeaconPOSIX
public import StationSettings
import SystemPackage
import TextFormats

/// The configuration flags `run` and `check-config` share: `--config` and one flag per configuration key,
/// each overriding the file.
public struct ConfigOptions: ParsableArguments {
    public static let defaultPath = "/etc/beacond/beacond.conf"

    @Option(
        help: ArgumentHelp(
            "Configuration file (default \(ConfigOptions.defaultPath), if it exists).", valueName: "path"))
    public var config: String?

    /// One flag per configuration key (`DaemonConfiguration.table`), `--KEY VALUE` or `--KEY=VALUE`, parsed by
    /// `flagEntries` from the table rather than declared here one by one, so a key and its flag cannot drift apart.
    /// Listed in `--help` by `keyHelp`.
    @Argument(parsing: .allUnrecognized, help: .hidden) var keyFlags: [String] = []

    public init() {}

    public mutating func validate() throws {
        _ = try Self.entries(keyFlags)
    }

    /// The flags given, as configuration entries.
    var flagEntries: [ConfigFile.Entry] { (try? Self.entries(keyFlags)) ?? [] }

    /// `--state-dir`, the name `--state-directory` had first.
    static let aliases = ["state-dir": "state-directory"]

    /// `--KEY VALUE` and `--KEY=VALUE` pairs as entries: the value is the next argument whatever it starts with, so
    /// a café west of Greenwich types `--longitude -0.12`.
    static func entries(_ arguments: [String]) throws(ValidationError) -> [ConfigFile.Entry] {
        var entries: [ConfigFile.Entry] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            guard argument.hasPrefix("--"), argument.count > 2 else {
                throw ValidationError("unexpected argument '\(argument)'")
            }
            var name = String(argument.dropFirst(2))
            var value: String
            if let equals = name.firstIndex(of: "=") {
                value = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            } else {
                guard index + 1 < arguments.count else { throw ValidationError("--\(name) needs a value") }
                index += 1
                value = arguments[index]
            }
            name = aliases[name] ?? name
            guard DaemonConfiguration.keys.contains(name) else { throw ValidationError("unknown option '--\(name)'") }
            entries.append(ConfigFile.Entry(key: name, value: value, line: 0))
            index += 1
        }
        return entries
    }

    /// The key flags for a command's `--help`, one per key with its value's shape, meaning and default.
    public static var keyHelp: String {
        let defaults = DaemonConfiguration().settings
        let lines = DaemonConfiguration.table.map { key in
            let given = defaults[key.name].flatMap { $0.isEmpty ? nil : " (default: \($0))" } ?? ""
            return "  --\(key.name) <\(key.valueName)>\n" + wrapped(key.help + given, indent: 8, width: 79)
        }
        return
            "Configuration keys, each also a flag of the same name and a variable BEACOND_KEY (station-id: BEACOND_STATION_ID; a list comma-separated). A flag wins over the variable, the variable over the file:\n"
            + lines.joined(separator: "\n")
    }

    /// `text` in lines of at most `width` columns, each indented: already wrapped, the help is not wrapped again
    /// (ArgumentParser wraps a discussion's long lines at 80 columns, losing their indentation).
    static func wrapped(_ text: String, indent: Int, width: Int) -> String {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty, indent + line.count + 1 + word.count > width {
                lines.append(line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        if !line.isEmpty { lines.append(line) }
        let margin = String(repeating: " ", count: indent)
        return lines.map { margin + $0 }.joined(separator: "\n")
    }

    /// Reads the file (if any) and applies the flags. Errors name the file or flag, key and reason.
    public func load(environment: [String: String]) -> (DaemonConfiguration, [String]) {
        Self.load(config: config, flags: flagEntries, environment: environment)
    }

    /// The same load, again later: for SIGHUP, which reads the file again with the same flags on top.
    public var reloader: @Sendable ([String: String]) -> (DaemonConfiguration, [String]) {
        let config = self.config
        let flags = flagEntries
        return { Self.load(config: config, flags: flags, environment: $0) }
    }

    static func load(config: String?, flags: [ConfigFile.Entry], environment: [String: String]) -> (
        DaemonConfiguration, [String]
    ) {
        var file = ConfigFile(entries: [])
        var unreadable: String?
        let path = config ?? Self.defaultPath
        do {
            file = ConfigFile(text: String(decoding: try WholeFile.read(path: path, limit: 1 << 20), as: UTF8.self))
        } catch {
            // The default file may be absent; a file named on the command line must exist.
            if config != nil || error.errno != .noSuchFileOrDirectory { unreadable = "\(error)" }
        }
        let (configuration, errors) = DaemonConfiguration.load(
            file: file.entries, flags: flags, environment: environment)
        let all = (file.errors + errors).enumerated().sorted {
            ($0.element.line ?? .max, $0.offset) < ($1.element.line ?? .max, $1.offset)
        }
        let messages = all.map(\.element).map { error in
            switch error.line {
            case 0 where error.variable != nil: "\(error.variable!): \(error.key): \(error.reason)"
            case 0: "--\(error.key): \(error.reason)"
            case let line?: "\(path): line \(line): \(error.key): \(error.reason)"
            case nil: "\(error.key): \(error.reason)"
            }
        }
        return (configuration, (unreadable.map { [$0] } ?? []) + messages)
    }
}
