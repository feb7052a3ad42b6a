public import ArgumentParser
import BeaconCapture
public import BeaconWire
import SystemPackage

/// `beacond replay FILE…`: decode recorded captures and print their iBeacon advertisements.
public struct ReplayCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Print the iBeacon advertisements in recorded captures.",
        discussion: """
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

    @Option(help: "Output: 'table' for people, 'jsonl' for one JSON object per advert.")
    public var format: Format = .table

    @Option(
        name: .customLong("region"),
        help: ArgumentHelp("Only print beacons in this region (repeatable).", valueName: "uuid[:major]"))
    public var regions: [BeaconRegion] = []

    public init() {}

    public func validate() throws {
        if files.isEmpty { throw ValidationError("Name at least one capture file.") }
    }

    public func run() throws {
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
            var decoder = AdvertDecoder()
            if format == .table, files.count > 1 { try output.write(table.startFile(file.path, format: file.format)) }
            var failure: (any Error)?
            try file.forEachRecord { record, position in
                decoder.decode(record) { advert in
                    guard failure == nil, let line = AdvertLine(frame: position.frame, advert: advert),
                        regions.isEmpty || regions.contains(where: { $0.contains(line.beacon) })
                    else { return }
                    do {
                        try output.write(format == .jsonl ? line.json : table.rows(for: line))
                    } catch {
                        failure = error
                    }
                }
                if let failure { throw failure }
            }
            total.add(decoder.counters)
            total.add(file.counters)
        }
        return total
    }
}

func printToStandardError(_ text: String) {
    _ = try? FileDescriptor.standardError.writeAll(Array(text.utf8))
}
