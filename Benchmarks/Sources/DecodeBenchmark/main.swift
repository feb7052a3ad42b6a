// Decode benchmark: beacond's capture reader and decoder against a plain C loop over the same pcap, in one
// run, plus tshark when asked. Prints ns/report, reports/s, the ratio to the C loop, and heap allocations
// per report during the decode loop.
import BeaconCapture
import BeaconWire
import CDecodeLoop
import CMallocCounter
import Foundation

struct Measurement {
    var name: String
    var seconds: Double
    var reports: UInt64
    var allocationsPerReport: Double?
}

struct Tally: Equatable {
    var reports: UInt64 = 0
    var ibeacons: UInt64 = 0
    var checksum: UInt64 = 0
}

func decodeWithBeacond(_ path: String) throws -> (Tally, allocations: UInt64) {
    let file = try CaptureFile(path: path)
    var decoder = AdvertDecoder()
    var tally = Tally()
    let before = beacond_allocation_count()
    try file.forEachRecord { record, _ in
        decoder.decode(record) { advert in
            if let beacon = advert.beacon {
                tally.ibeacons &+= 1
                tally.checksum &+= UInt64(beacon.minor) &+ UInt64(beacon.major) &+ UInt64(bitPattern: Int64(beacon.measuredPower))
            }
        }
    }
    let allocations = beacond_allocation_count() - before
    tally.reports = decoder.counters.advertisingReports
    return (tally, allocations)
}

func decodeWithC(_ path: String) throws -> Tally {
    let result = c_decode_pcap201(path)
    guard result.error == 0 else { throw NSError(domain: "c_decode", code: Int(result.error)) }
    return Tally(reports: result.reports, ibeacons: result.ibeacons, checksum: result.checksum)
}

func time<T>(_ body: () throws -> T) rethrows -> (T, Double) {
    let start = ContinuousClock.now
    let value = try body()
    let elapsed = ContinuousClock.now - start
    return (value, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
}

func tshark(_ path: String) -> Double? {
    guard let tshark = ["/usr/bin/tshark", "/usr/local/bin/tshark"].first(where: FileManager.default.isExecutableFile) else { return nil }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: tshark)
    // Address, manufacturer and RSSI of every report (tshark 4.0 names no separate iBeacon fields); it
    // dissects each packet in full either way, which is the cost measured here.
    process.arguments = ["-r", path, "-T", "fields", "-e", "bthci_evt.bd_addr", "-e", "btcommon.eir_ad.entry.company_id",
                         "-e", "bthci_evt.rssi"]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    let (_, seconds) = time { try? process.run(); process.waitUntilExit() }
    return process.terminationStatus == 0 ? seconds : nil
}

// ---------------------------------------------------------------- arguments
var arguments = Array(CommandLine.arguments.dropFirst())
let withTshark = arguments.contains("--tshark")
arguments.removeAll { $0 == "--tshark" }
var iterations = 7
if let index = arguments.firstIndex(of: "--iterations"), index + 1 < arguments.count, let value = Int(arguments[index + 1]) {
    iterations = value
    arguments.removeSubrange(index...(index + 1))
}
let path = arguments.first ?? "Benchmarks/out/adverts-1m.pcap"
guard FileManager.default.fileExists(atPath: path) else {
    FileHandle.standardError.write(Data("no capture at \(path): run python3 Benchmarks/generate-capture.py first\n".utf8))
    exit(2)
}

// ---------------------------------------------------------------- runs (interleaved, best of N)
var bestC = Double.infinity
var bestSwift = Double.infinity
var cTally = Tally()
var swiftTally = Tally()
var allocations: UInt64 = 0
for _ in 0..<iterations {
    let (c, cSeconds) = try time { try decodeWithC(path) }
    let (swift, swiftSeconds) = try time { try decodeWithBeacond(path) }
    bestC = min(bestC, cSeconds)
    bestSwift = min(bestSwift, swiftSeconds)
    (cTally, swiftTally, allocations) = (c, swift.0, swift.allocations)
}
guard cTally == swiftTally else {
    FileHandle.standardError.write(Data("the two decoders disagree: C \(cTally), beacond \(swiftTally)\n".utf8))
    exit(1)
}

var rows = [
    Measurement(name: "plain C loop", seconds: bestC, reports: cTally.reports),
    Measurement(name: "beacond (CaptureFile + AdvertDecoder)", seconds: bestSwift, reports: swiftTally.reports,
                allocationsPerReport: Double(allocations) / Double(swiftTally.reports)),
]
if withTshark, let seconds = tshark(path) {
    rows.append(Measurement(name: "tshark 4.0 (-T fields)", seconds: seconds, reports: cTally.reports))
}

print("capture: \(path), \(cTally.reports) advertising reports, \(cTally.ibeacons) iBeacons; best of \(iterations) runs")
print("decoder".padding(toLength: 40, withPad: " ", startingAt: 0) + "  ns/report   reports/s   vs C   allocs/report")
for row in rows {
    let nanoseconds = row.seconds * 1e9 / Double(row.reports)
    let perSecond = Double(row.reports) / row.seconds
    var line = row.name.padding(toLength: 40, withPad: " ", startingAt: 0)
    line += String(format: "  %9.1f  %10.0f  %5.2fx", nanoseconds, perSecond, row.seconds / bestC)
    line += row.allocationsPerReport.map { String(format: "  %13.6f", $0) } ?? "              -"
    print(line)
}
// Zero allocations per report is a goal the benchmark enforces.
if allocations > 0 {
    FileHandle.standardError.write(Data("beacond allocated \(allocations) times while decoding\n".utf8))
    exit(1)
}
