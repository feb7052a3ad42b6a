public import ArgumentParser

/// The `beacond` command. `run` (the daemon) and `status` arrive with the daemon; today it replays.
public struct Beacond: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "beacond",
        abstract: "Missing-bike detector: listens for iBeacon adverts and reports bikes the registry marks missing.",
        discussion: """
            Adverts in a recorded capture:   beacond replay Fixtures/edge/sections.pcapng
            Sightings of missing bikes:      beacond replay Fixtures/cafe/cafe.pcap --missing Fixtures/cafe/bikes.json
            Machine-readable output:         beacond replay --format jsonl CAPTURE
            """,
        version: BeacondVersion.current,
        subcommands: [ReplayCommand.self, CheckConfigCommand.self]
    )

    public init() {}
}

public enum BeacondVersion {
    public static let current = "0.1.0"
}
