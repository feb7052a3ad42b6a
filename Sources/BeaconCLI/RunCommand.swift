public import ArgumentParser
import BeaconDaemon
import Logging

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `beacond run`: the daemon, as systemd runs it, or on a recorded capture.
public struct RunCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the daemon: listen, match missing bikes, report sightings (what systemd runs).",
        discussion: """
            Reads the configuration file (see check-config), then every flag on top. Sightings are committed \
            to the outbox in the state directory before they are sent, so nothing is lost when the network \
            or the registry is down, or the daemon is stopped. `beacond status` asks the running daemon how \
            it is, through the control socket.

            With --replay the daemon listens to recorded captures instead of a radio: at the capture's own \
            pace (--speed 1), faster, or as fast as it goes (--speed 0). With --exit-when-drained it exits \
            once the replay is over and every sighting has been delivered.

            Signals: SIGTERM and SIGINT stop capture, drain what was heard, commit it and exit 0; SIGHUP \
            reads the configuration again (registry, auth and API key apply at once; other keys at the next \
            restart) and refreshes the missing-bike set.

            Exit status: 0 after a clean stop; 1 when capture fails; 2 when a capture file cannot be read; \
            69 when the capture backend is unavailable; 73 when the state directory, outbox or control socket \
            cannot be made; 78 for configuration errors.
            """ + "\n\n" + ConfigOptions.keyNote)

    @OptionGroup public var options: ConfigOptions

    @Option(
        help: ArgumentHelp(
            "Capture from this recorded file instead of a radio (repeatable, in order).", valueName: "file"))
    public var replay: [String] = []

    @Option(
        help: ArgumentHelp("Replay speed: 1 real time, 10 ten times faster, 0 as fast as possible.", valueName: "x"))
    public var speed: Double = 1

    @Flag(help: "After a replay, wait until every sighting is delivered, then exit 0.")
    public var exitWhenDrained = false

    @Option(
        help: ArgumentHelp(
            "Least important log level written: trace, debug, info, notice, warning, error.", valueName: "level"))
    public var logLevel: String = "info"

    public init() {}

    public func validate() throws {
        guard speed.isFinite, speed >= 0 else { throw ValidationError("--speed must be 0 or more") }
        guard !exitWhenDrained || !replay.isEmpty else { throw ValidationError("--exit-when-drained needs --replay") }
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("--log-level: unknown level \"\(logLevel)\"")
        }
    }

    public func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let (configuration, errors) = options.load(environment: environment)
        guard errors.isEmpty else {
            printToStandardError(errors.map { "beacond: \($0)\n" }.joined())
            throw ExitCode(78)
        }
        let level = Logger.Level(rawValue: logLevel) ?? .info
        let priorities = environment["JOURNAL_STREAM"] != nil
        LoggingSystem.bootstrap { label in JournalLogHandler(label: label, level: level, priorities: priorities) }
        var daemon = Daemon(configuration: configuration)
        daemon.replay = replay
        daemon.speed = speed
        daemon.exitWhenDrained = exitWhenDrained
        daemon.environment = environment
        let reload = options.reloader
        daemon.reloadConfiguration = { reload(environment) }
        let status = await daemon.run(logger: Logger(label: "beacond"))
        if status != 0 { throw ExitCode(status) }
    }
}
