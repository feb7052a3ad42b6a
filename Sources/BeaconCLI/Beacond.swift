public import ArgumentParser
import DaemonSupport

/// The `beacond` command: the daemon (`run`), its control (`status`, `refresh`) and the offline tools.
public struct Beacond: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "beacond",
        abstract: "Missing-bike detector: listens for iBeacon adverts and reports bikes the registry marks missing.",
        discussion: """
            The daemon (systemd runs this):  beacond run
            How the running daemon is:       beacond status
            The daemon on a café recording:  beacond demo
            Adverts in a recorded capture:   beacond replay Fixtures/edge/sections.pcapng
            Sightings of missing bikes:      beacond replay Fixtures/cafe/cafe.pcap --missing Fixtures/cafe/bikes.json
            Machine-readable output:         beacond replay --format jsonl CAPTURE
            """,
        version: ReleaseVersion.current,
        subcommands: [
            RunCommand.self, StatusCommand.self, RefreshCommand.self, RetryDeadLettersCommand.self, DemoCommand.self,
            ReplayCommand.self, ScanCommand.self, RecordCommand.self,
            CheckConfigCommand.self, DoctorCommand.self,
        ]
    )

    public init() {}
}
