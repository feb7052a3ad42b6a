public import ArgumentParser
import BeaconDaemon
import BeaconEngine
import LockedValue
import Logging
import StationSettings

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// `beacond demo`: the whole daemon on the bundled café recording, with the embedded file registry, in a
/// throw-away state directory; prints sightings as they happen and ends by itself.
public struct DemoCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run the daemon on the bundled café capture (no Bluetooth needed) and show its sightings.",
        discussion: """
            The same as

              beacond run --replay CAPTURE --speed 150 --exit-when-drained --station-id demo-cafe \\
                --state-directory TMP --control-socket TMP/control.sock   (with BIKES copied to TMP/bikes.json)

            in a fresh temporary state directory, removed afterwards: capture, engine, outbox, poster and \
            the embedded file registry (file://TMP/bikes.json, sightings appended to TMP/sightings.jsonl) \
            all run for real. While it runs, `beacond status --control-socket TMP/control.sock` asks it how \
            it is. Run it from the repository root, or name the files.
            """)

    @Option(help: ArgumentHelp("The recorded capture to replay.", valueName: "file"))
    public var capture = "Fixtures/cafe/cafe.pcap"

    @Option(help: ArgumentHelp("The registry's bike list (as GET /bikes answers).", valueName: "bikes.json"))
    public var bikes = "Fixtures/cafe/bikes.json"

    @Option(help: ArgumentHelp("Replay speed (the café recording is 41 minutes long).", valueName: "x"))
    public var speed: Double = 150

    @Flag(help: "Keep the temporary state directory (outbox, registry files) instead of removing it.")
    public var keepState = false

    public init() {}

    public func validate() throws {
        guard speed.isFinite, speed >= 0 else { throw ValidationError("--speed must be 0 or more") }
    }

    public func run() async throws {
        let fileManager = FileManager.default
        for path in [capture, bikes] where !fileManager.fileExists(atPath: path) {
            printToStandardError(
                "beacond: \(path): no such file (run the demo from the repository root, or name the files)\n")
            throw ExitCode(2)
        }
        let state = fileManager.temporaryDirectory.appendingPathComponent("beacond-demo-\(getpid())").path
        try fileManager.createDirectory(atPath: state, withIntermediateDirectories: true)
        defer { if !keepState { try? fileManager.removeItem(atPath: state) } }
        try fileManager.copyItem(atPath: bikes, toPath: state + "/bikes.json")

        var configuration = DaemonConfiguration()
        configuration.stationID = "demo-cafe"
        configuration.stateDirectory = state
        configuration.controlSocket = state + "/control.sock"
        LoggingSystem.bootstrap { label in JournalLogHandler(label: label, level: .warning, priorities: false) }

        // Everything through one unbuffered handle, so the header and the rows printed from the engine's
        // thread come out in order.
        writeToStandardOutput(
            """
            beacond demo: replaying \(capture) at \(speed == 0 ? "full speed" : "\(speed)x") with the embedded registry
              state \(state); try: beacond status --control-socket \(state)/control.sock

            \(SightingTable.header)
            """)
        let table = LockedValue(SightingTable())
        var daemon = Daemon(configuration: configuration)
        daemon.replay = [capture]
        daemon.speed = speed
        daemon.exitWhenDrained = true
        daemon.onSighting = { sighting in
            let rows = table.withLock { $0.rows(for: sighting) }
            writeToStandardOutput(rows)
        }
        let status = await daemon.run(logger: Logger(label: "beacond"))
        guard status == 0 else { throw ExitCode(status) }
        let delivered =
            (try? String(contentsOfFile: state + "/sightings.jsonl", encoding: .utf8))?.split(separator: "\n").count
            ?? 0
        writeToStandardOutput(
            "\n\(delivered) sightings delivered to the embedded registry (\(state)/sightings.jsonl)\(keepState ? "" : ", now removed").\n"
        )
    }
}
