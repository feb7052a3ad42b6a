public import ArgumentParser
import BeaconDaemon

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `beacond doctor`: checks every link the service needs, one line each, and says what fixes what is broken.
public struct DoctorCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check everything the service needs, one line each, with the command that fixes what is wrong.",
        discussion: """
            Run it after installing and after changing anything (as root, or as a member of the beacond group to \
            see the daemon's own health). It checks, in order: the configuration; each adapter (present, \
            powered, not blocked by rfkill); bluetoothd (running, its version, whether the advertisement-monitor \
            API is on) for the monitor and dbus backends; the capabilities the backend needs (those of \
            beacond.service when it is installed, else your own); the state directory (writable by the \
            service, room for the outbox); the registry (reachable, and accepting the key: one conditional \
            GET /bikes); the system clock (synchronised); and the service (active and healthy, asked through \
            the control socket).

            Exit status: 0 when every check passes (warnings allowed), 1 when one fails.
            """ + "\n\n" + ConfigOptions.keyNote)

    @OptionGroup public var options: ConfigOptions

    @Flag(help: "Print the checks as JSON, for machines.")
    public var json = false

    public init() {}

    public func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let (configuration, errors) = options.load(environment: environment)
        let doctor = Doctor(
            configuration: configuration, errors: errors, path: options.config ?? ConfigOptions.defaultPath,
            environment: environment)
        let report = await doctor.run()
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            writeToStandardOutput(String(decoding: try encoder.encode(report), as: UTF8.self) + "\n")
        } else {
            writeToStandardOutput(report.text)
        }
        if !report.passed { throw ExitCode(1) }
    }
}
