public import ArgumentParser
import BeaconCapture
import BeaconDaemon
public import BeaconEngine
import BeaconPOSIX
import BeaconRegistryClient
public import BeaconWire
import BikeListJSON
import StationSettings
import SystemPackage
import TextFormats

/// `beacond replay FILE…`: decode recorded captures and print their iBeacon advertisements.
public struct ReplayCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Print the iBeacon adverts in recorded captures, or (with --missing) the sightings they cause.",
        discussion: """
            Without --missing, every iBeacon advert is printed. With --missing BIKES.json (a list of bikes as \
            the registry answers GET /bikes), the captures run through the ranging engine on the capture's own \
            clock and the sightings of missing bikes are printed instead: one enter when a bike is first heard, \
            at most one update per --report-interval while it stays, one exit when it has been silent for the \
            exit timeout. Visits still open at the end are closed with an exit at their last-seen time. \
            The same captures always give the same sightings, ids included.

            Reads pcap and pcapng (link types 201, 187 and 254), btsnoop (datalinks 1001, 1002 and 2001, \
            as btmon -w and Android write them) and hex text (hcidump -R output, or one H4 packet per line \
            with # comments). The format is detected from the content, not the file name.

            A summary of what was read and what was dropped (and why) goes to stderr at the end.
            Exit status: 0 when every file was read, even with dropped records; 2 when a file cannot be \
            opened or is not a capture; 64 for a usage error.
            """
    )

    public enum Format: String, ExpressibleByArgument, CaseIterable, Sendable {
        case table, jsonl
    }

    @Argument(help: ArgumentHelp("Capture files to decode, in order.", valueName: "file"))
    public var files: [String]

    @Option(help: "Output: 'table' for people, 'jsonl' for one JSON object per advert or sighting.")
    public var format: Format = .table

    @Option(
        name: .customLong("region"),
        help: ArgumentHelp(
            "Only beacons in this region (repeatable). With --missing the default is the FindMyBike region "
                + "\(BeaconRegion.findMyBike).",
            valueName: "uuid[:major]"))
    public var regions: [BeaconRegion] = []

    @Option(
        help: ArgumentHelp(
            "Print sightings of the missing bikes in this list (JSON, as GET /bikes answers).", valueName: "bikes.json")
    )
    public var missing: String?

    // The engine's keys are the daemon's (`DaemonConfiguration.table`): their help and bounds come from there, and so
    // do the errors, as `beacond run` and the file give them.
    @Option(help: Self.help("station-id"))
    public var stationId: String = "replay"

    @Option(help: Self.help("exit-timeout"))
    public var exitTimeout: Int = 30

    @Option(help: Self.help("report-interval"))
    public var reportInterval: Int = 600

    @Option(
        help: ArgumentHelp("The café's own beacon, which is never reported as a bike.", valueName: "uuid:major:minor"))
    public var stationBeacon: BeaconIdentity?

    public init() {}

    public func validate() throws {
        if files.isEmpty { throw ValidationError("Name at least one capture file.") }
        let given = [
            ("station-id", stationId), ("exit-timeout", "\(exitTimeout)"), ("report-interval", "\(reportInterval)"),
        ]
        let (_, errors) = DaemonConfiguration.load(
            file: [], flags: given.map { ConfigFile.Entry(key: $0.0, value: $0.1, line: 0) })
        if let error = errors.first(where: { error in given.contains { $0.0 == error.key } }) {
            throw ValidationError("--\(error.key): \(error.reason)")
        }
    }

    /// A key's help as the daemon's table gives it.
    static func help(_ name: String) -> ArgumentHelp {
        let key = DaemonConfiguration.key(name)
        return ArgumentHelp(key?.help ?? "", valueName: key?.valueName)
    }

    public func run() throws {
        if let missing { return try runSightings(missingPath: missing) }
        var output = OutputBuffer(descriptor: .standardOutput)
        do {
            let counters = try Replay(format: format, regions: regions).run(paths: files, output: &output)
            try output.flush()
            printToStandardError(DecodeSummary.render(counters, files: files.count))
        } catch let error as CaptureFileError {
            try? output.flush()
            printToStandardError("beacond: \(error)\n")
            throw ExitCode(2)
        }
    }
}

extension ReplayCommand {
    /// Bike lists larger than this are refused: 65,536 bikes with long names fit in well under it.
    static let bikeListLimit = 32 * 1024 * 1024

    func runSightings(missingPath: String) throws {
        let configuration = EngineConfiguration(
            stationID: stationId, regions: regions.isEmpty ? [.findMyBike] : regions,
            exitTimeout: .seconds(exitTimeout), reportInterval: .seconds(reportInterval), stationBeacon: stationBeacon)
        let set: MissingBikeSet
        do {
            let list = try BikeList(json: try WholeFile.read(path: missingPath, limit: Self.bikeListLimit))
            set = MissingBikeSet(list: list, regions: configuration.regions)
        } catch let error as FileReadError {
            printToStandardError("beacond: \(error)\n")
            throw ExitCode(2)
        } catch {
            printToStandardError("beacond: \(missingPath): \(error)\n")
            throw ExitCode(2)
        }
        var output = OutputBuffer(descriptor: .standardOutput)
        do {
            let replay = SightingReplay(format: format, configuration: configuration, missing: set)
            let result = try replay.run(paths: files, output: &output)
            try output.flush()
            printToStandardError(DecodeSummary.render(result.decode, files: files.count))
            printToStandardError(SightingSummary.render(result, missing: set.statistics))
        } catch let error as CaptureFileError {
            try? output.flush()
            printToStandardError("beacond: \(error)\n")
            throw ExitCode(2)
        }
    }
}

extension BeaconIdentity: ExpressibleByArgument {
    public init?(argument: String) { self.init(argument) }
}

extension BeaconRegion: ExpressibleByArgument {
    public init?(argument: String) { self.init(argument) }
}

/// The replay itself, apart from argument parsing so tests can run it on any output.
public struct Replay {
    public var format: ReplayCommand.Format
    public var regions: [BeaconRegion]

    public init(format: ReplayCommand.Format, regions: [BeaconRegion] = []) {
        self.format = format
        self.regions = regions
    }

    /// Opens every file before printing anything, so a bad path fails fast with nothing half-printed.
    public func run(paths: [String], output: inout OutputBuffer) throws -> DecodeCounters {
        let files = try paths.map { path throws(CaptureFileError) in try CaptureFile(path: path) }
        var total = DecodeCounters()
        var table = AdvertTable()
        if format == .table { try output.write(AdvertTable.header) }
        for file in files {
            if format == .table, files.count > 1 { try output.write(table.startFile(file.path, format: file.format)) }
            total.add(
                try file.forEachAdvert { advert, position in
                    guard let line = AdvertLine(frame: position.frame, advert: advert),
                        regions.isEmpty || regions.contains(where: { $0.contains(line.beacon) })
                    else { return }
                    if format == .jsonl {
                        try output.write(line.appendJSON)
                    } else {
                        try output.write(table.rows(for: line))
                    }
                })
        }
        return total
    }
}

func printToStandardError(_ text: String) {
    _ = try? FileDescriptor.standardError.writeAll(Array(text.utf8))
}

/// Unbuffered: text written from two threads comes out in the order it was written.
func writeToStandardOutput(_ text: String) {
    _ = try? FileDescriptor.standardOutput.writeAll(Array(text.utf8))
}
