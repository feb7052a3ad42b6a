public import ArgumentParser
import BeaconCapture
import BeaconWire

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `beacond record FILE`: what the adapter hears, as a pcap file that Wireshark and `beacond replay` read.
public struct RecordCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Record what an adapter hears to a pcap file (link type 201) for Wireshark or beacond replay.",
        discussion: """
            Starts a passive LE scan on the adapter (raw HCI: needs CAP_NET_RAW, or root) and writes every \
            event the adapter reports until Ctrl-C, SIGTERM or --duration. The scan is disabled again on exit. \
            Records are written whole as they arrive, so a recording cut short is still readable.

            Exit status: 0 after a clean stop; 69 when there is no Bluetooth or no such adapter; 73 when the \
            file cannot be written; 77 without the capability.
            """)

    @Argument(help: ArgumentHelp("The pcap file to write (replaced if it exists).", valueName: "file"))
    public var file: String

    @Option(help: ArgumentHelp("Adapter name or address.", valueName: "hciN|address"))
    public var adapter = "hci0"

    @Option(help: ArgumentHelp("Stop after this many seconds (default: until interrupted).", valueName: "s"))
    public var duration: Double?

    @Option(name: .customLong("scan-interval-ms"), help: "LE scan interval, milliseconds.")
    public var scanInterval: Double = 100

    @Option(name: .customLong("scan-window-ms"), help: "LE scan window, milliseconds.")
    public var scanWindow: Double = 100

    public init() {}

    public func run() throws {
        StopSignal.install()
        let capture: HCICapture
        do {
            capture = try HCICapture(
                adapters: [adapter],
                settings: CaptureSettings(intervalMilliseconds: scanInterval, windowMilliseconds: scanWindow))
            try capture.start()
        } catch {
            printToStandardError("beacond: \(error)\n")
            throw ExitCode(error.exitCode)
        }
        let writer: PcapWriter
        do {
            writer = try PcapWriter(path: file)
        } catch {
            printToStandardError("beacond: \(error)\n")
            throw ExitCode(73)
        }
        printToStandardError("beacond: recording \(adapter) to \(file); Ctrl-C to stop\n")
        let failure = StopSignal.poll(capture, for: duration) { record in
            try writer.append(record.payload, time: record.time!)
        }
        capture.stop()
        printToStandardError("beacond: \(writer.records) packets written to \(file)\n")
        if let failure {
            printToStandardError("beacond: \(failure)\n")
            throw ExitCode(failure is CaptureFileError ? 73 : 69)
        }
    }
}
