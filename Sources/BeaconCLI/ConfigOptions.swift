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

    /// One flag per configuration key (`DaemonConfiguration.table`).
    @OptionGroup(title: "Configuration keys")
    var keys: KeyFlags

    public init() {}

    /// The flags given, as configuration entries.
    var flagEntries: [ConfigFile.Entry] { keys.entries }

    /// For a command's `--help`: the three forms of a key.
    public static let keyNote = """
        Every configuration key is a flag (listed below), a line of the file (key = value) and a variable \
        BEACOND_KEY (station-id: BEACOND_STATION_ID; a list's values comma-separated). A flag wins over the \
        variable, the variable over the file.
        """

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
            case 0 where error.variable != nil: error.description
            case 0: "--\(error.key): \(error.reason)"
            case let line?: "\(path): line \(line): \(error.key): \(error.reason)"
            case nil: "\(error.key): \(error.reason)"
            }
        }
        return (configuration, (unreadable.map { [$0] } ?? []) + messages)
    }
}
