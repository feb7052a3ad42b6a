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
}
