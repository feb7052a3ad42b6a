public import ArgumentParser
import BeaconCapture
import BeaconDaemon
import BeaconWire
public import StationSettings
import TextFormats

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// `beacond scan`: a live table of the iBeacons an adapter hears, so a rider can check a new beacon.
public struct ScanCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract:
            "Show a live, refreshing table of the iBeacons an adapter hears (UUID, major, minor, RSSI, count, last seen).",
        discussion: """
            Scans the way the configured backend does (--backend to choose: hci needs CAP_NET_RAW and scans \
            itself, disabling the scan again on exit; monitor and dbus ask bluetoothd) and shows the beacons of the configured regions: --region, else the configuration file's, else \
            the FindMyBike region. --all shows every iBeacon. On a terminal the table is redrawn every second \
            until Ctrl-C; otherwise it is printed once, when the scan ends (--duration, Ctrl-C or SIGTERM).

            Exit status: 0 after a clean stop; 69 when there is no Bluetooth, no such adapter or no bluetoothd; \
            77 without the capability; 78 for configuration errors.
            """)

    @Option(
        help: ArgumentHelp(
            "Adapter name or address (repeatable; default the configuration's, else hci0).", valueName: "hciN|address"))
    public var adapter: [String] = []

    @Option(
        help: ArgumentHelp(
            "How to reach the radio: hci, monitor or dbus (default the configuration's backend).", valueName: "backend")
    )
    public var backend: RadioBackend?

    @Flag(help: "Show every iBeacon, not only the configured regions.")
    public var all = false

    @Option(help: ArgumentHelp("Region to show (repeatable).", valueName: "uuid[:major]"))
    public var region: [String] = []

    @Option(
        help: ArgumentHelp(
            "Configuration file for the regions and adapter (default /etc/beacond/beacond.conf, if it exists).",
            valueName: "path"))
    public var config: String?

    @Option(help: ArgumentHelp("Stop after this many seconds (default: until interrupted).", valueName: "s"))
    public var duration: Double?

    public init() {}

    public func run() throws {
        var flags = region.map { ConfigFile.Entry(key: "region", value: $0, line: 0) }
        flags += adapter.map { ConfigFile.Entry(key: "adapter", value: $0, line: 0) }
        let (configuration, errors) = ConfigOptions.load(config: config, flags: flags, environment: [:])
        guard errors.isEmpty else {
            printToStandardError(errors.map { "beacond: \($0)\n" }.joined())
            throw ExitCode(78)
        }
        let capture: any LiveRadio
        do throws(HCIError) {
            // --all: bluetoothd's monitor would pass only the configured regions, so ask it for everything.
            (capture, _) = try (backend ?? configuration.backend).open(
                adapters: configuration.adapters, regions: all ? [] : configuration.regions,
                settings: CaptureSettings(
                    intervalMilliseconds: configuration.scanIntervalMilliseconds,
                    windowMilliseconds: configuration.scanWindowMilliseconds))
        } catch {
            printToStandardError("beacond: \(error)\n")
            throw ExitCode(error.exitCode)
        }
        StopSignal.install()
        let terminal = isatty(STDOUT_FILENO) == 1
        var table = ScanTable(regions: all ? [] : configuration.regions)
        var decoder = AdvertDecoder()
        var nextDraw = Date()
        if !terminal {
            printToStandardError(
                "beacond: scanning \(configuration.adapters.joined(separator: ", ")); Ctrl-C to stop\n")
        }
        let failure = StopSignal.poll(
            capture, for: duration,
            afterEachPoll: {
                if terminal && Date() >= nextDraw {
                    nextDraw = Date().addingTimeInterval(1)
                    // Home, clear, redraw: a live table without a curses dependency.
                    writeToStandardOutput("\u{1B}[H\u{1B}[2J" + table.render(now: Self.now()))
                }
            }
        ) { record in decoder.decode(record) { table.add($0) } }
        capture.stop()
        writeToStandardOutput((terminal ? "\u{1B}[H\u{1B}[2J" : "") + table.render(now: Self.now()))
        if let failure {
            printToStandardError("beacond: \(failure)\n")
            throw ExitCode(69)
        }
    }

    static func now() -> CaptureTime { CaptureTime(nanosecondsSinceEpoch: Int64(Date().timeIntervalSince1970 * 1e9)) }
}

extension RadioBackend: ExpressibleByArgument {}
