public import ArgumentParser
import BeaconControl
import BeaconDaemon
import StationSettings

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `beacond status`: asks the running daemon, through its control socket, how it is.
public struct StatusCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show how the running daemon is: capture, missing bikes, outbox, today's sightings.",
        discussion: """
            Asks the daemon through its control socket (mode 0660: root and the beacond group). The socket is \
            --control-socket, else the control-socket key of the configuration file, else \
            /run/beacond/control.sock.

            Exit status: 0 when the daemon is running and healthy; 1 when it is running but unhealthy (the \
            summary says why); 3 when it is not running; 4 when the socket cannot be used (permission); 5 when the \
            daemon did not answer in time.
            """)

    @OptionGroup public var socket: ControlSocketOptions

    @Flag(help: "Print the full status as JSON, for machines.")
    public var json = false

    public init() {}

    public func run() throws {
        let response: ControlResponse
        do {
            response = try ControlClient.send("status", path: try socket.path())
        } catch let error as ControlClient.Failure {
            printToStandardError("beacond: \(error)\n")
            throw ExitCode(error.exitCode)
        }
        guard response.ok, let status = response.status else {
            printToStandardError("beacond: the daemon refused: \(response.error ?? "no reason given")\n")
            throw ExitCode(4)
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(status), as: UTF8.self))
        } else {
            print(StatusText.render(status, now: Date()), terminator: "")
        }
        if !status.healthy { throw ExitCode(1) }
    }
}

/// `beacond refresh`: asks the running daemon to fetch the missing-bike set now.
public struct RefreshCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "refresh",
        abstract: "Ask the running daemon to refresh the missing-bike set from the registry now.",
        discussion:
            "For root and members of the daemon's group. Exit status as for status: 3 when the daemon is not running, 4 without permission, 5 when it did not answer."
    )

    @OptionGroup public var socket: ControlSocketOptions

    public init() {}

    public func run() throws {
        try socket.ask("refresh", default: "refresh requested")
    }
}

/// `beacond retry-dead-letters`: once the reason the registry refused some sightings is fixed, queue them again.
public struct RetryDeadLettersCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "retry-dead-letters",
        abstract: "Queue the sightings the registry refused for good (the dead letters) again, oldest first.",
        discussion: """
            A sighting the registry answered 400 or 422 (for instance) is moved to the dead letters so the ones behind it \
            are not held up; `beacond status` and `beacond doctor` warn while there are any. Once the registry or the \
            station is fixed, this puts them back in the queue. For root and members of the daemon's group; exit \
            status as for refresh.
            """)

    @OptionGroup public var socket: ControlSocketOptions

    public init() {}

    public func run() throws {
        try socket.ask("retry-dead-letters", default: "done")
    }
}

/// Where `status`, `refresh` and `retry-dead-letters` find the daemon.
public struct ControlSocketOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Configuration file to take control-socket from.", valueName: "path"))
    public var config: String?

    @Option(help: ArgumentHelp("The daemon's control socket.", valueName: "path"))
    public var controlSocket: String?

    public init() {}

    /// The flag as given (a relative path is the client's to use, relative to where it runs), else the file's key,
    /// else the default. Errors elsewhere in the file do not matter here; one in its control-socket key does.
    func path() throws -> String {
        if let controlSocket {
            guard !controlSocket.isEmpty else { throw ValidationError("--control-socket needs a path") }
            return controlSocket
        }
        let (configuration, errors) = ConfigOptions.load(
            config: config, flags: [], environment: ProcessInfo.processInfo.environment)
        if let error = errors.first(where: { $0.contains("control-socket:") }) {
            printToStandardError("beacond: \(error)\n")
            throw ExitCode(78)
        }
        return configuration.controlSocket
    }

    /// Sends a request that changes something and prints the daemon's answer; exits as `status` does.
    func ask(_ request: String, default text: String) throws {
        do {
            let response = try ControlClient.send(request, path: try path())
            guard response.ok else {
                printToStandardError("beacond: \(response.error ?? "refused")\n")
                throw ExitCode(4)
            }
            print(response.message ?? text)
        } catch let error as ControlClient.Failure {
            printToStandardError("beacond: \(error)\n")
            throw ExitCode(error.exitCode)
        }
    }
}
