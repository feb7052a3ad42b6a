import ArgumentParser
import BeaconPOSIX
import BikeRegistryCore
import BikeRegistryMail
import BikeRegistryServer
import BikeRegistryStore
import DaemonSupport
import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import UnixSignals

@main
struct BikeRegistryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bike-registry",
        abstract:
            "The registry beacond stations report to: owners register bikes and mark them missing, stations fetch the missing list and post sightings, and owners are notified.",
        discussion: """
            The API is docs/registry-api.yaml. Data lives in one SQLite file (--database PATH, or registry.sqlite in \
            $STATE_DIRECTORY under systemd, else the working directory), or in a PostgreSQL database \
            (--database postgres://…) that several servers may share.
            """,
        version: ReleaseVersion.current,
        subcommands: [
            Serve.self, RegistryStatusCommand.self, StationCommand.self, BeaconCommand.self, AbuseCommand.self,
            StatsCommand.self, CheckMailCommand.self, BackupCommand.self, CheckCommand.self,
        ])

    /// ArgumentParser's own main, with serve's file and environment put before its command line (`ServeSettings`),
    /// and an error about a flag set there saying where it was set.
    static func main() async {
        var arguments = Array(CommandLine.arguments.dropFirst())
        var settings: ServeSettings?
        if arguments.first == "serve" {
            do {
                let read = try ServeSettings(
                    commandLine: Array(arguments.dropFirst()), environment: ProcessInfo.processInfo.environment)
                for variable in read.ignoredVariables {
                    FileHandle.standardError.write(
                        Data("bike-registry serve: \(variable) is not a setting of serve; ignored\n".utf8))
                }
                arguments = ["serve"] + read.arguments
                settings = read
            } catch {
                let lines = error.lines.map { "bike-registry serve: \($0)\n" }
                FileHandle.standardError.write(Data(lines.joined().utf8))
                // EX_CONFIG, as beacond's configuration errors: the unit does not restart on it.
                Foundation.exit(78)
            }
        }
        do {
            var command = try parseAsRoot(arguments)
            if var asynchronous = command as? any AsyncParsableCommand {
                try await asynchronous.run()
            } else {
                try command.run()
            }
        } catch {
            let code = exitCode(for: error)
            let message = message(for: error)
            guard code != .success, let origin = settings?.origin(ofFlagIn: message) else { exit(withError: error) }
            FileHandle.standardError.write(Data("Error: \(message) (\(origin))\n".utf8))
            Foundation.exit(code.rawValue)
        }
    }
}
