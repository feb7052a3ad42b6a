// Outbox benchmark: committing sightings to the SQLite outbox (WAL, synchronous=FULL), one per transaction as
// the engine does when sightings come one at a time, and in batches as when a burst arrives, against the floor
// any durable commit pays, measured in the same run in the same directory: write(2) of the same body, then
// fsync(2).
//
// Usage: OutboxBenchmark [--sightings N] [--directory DIR]   (DIR defaults to a new one under /tmp)
import BeaconEngine
import BeaconOutbox
import Foundation

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("OutboxBenchmark: \(message)\n".utf8))
    exit(1)
}

func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = ContinuousClock.now
    try body()
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

var arguments = Array(CommandLine.arguments.dropFirst())
func option(_ name: String, in arguments: inout [String]) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    defer { arguments.removeSubrange(index...(index + 1)) }
    return arguments[index + 1]
}
let sightings = option("--sightings", in: &arguments).flatMap(Int.init) ?? 1_000
let directory = option("--directory", in: &arguments) ?? FileManager.default.temporaryDirectory.appendingPathComponent("beacond-outbox-bench-\(getpid())").path
guard sightings >= 64, arguments.isEmpty else { fail("usage: OutboxBenchmark [--sightings N (64 or more)] [--directory DIR]") }
try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: directory) }

/// A body shaped like the registry's sighting payload (about 330 bytes), with a unique id.
func item(_ index: Int, batch: String) -> OutboxItem {
    let id = "\(batch)-\(String(index, radix: 16))"
    let body = """
        {"bikeId":"bike-\(index % 5000)","count":12,"distance":1.8,"firstSeen":"2026-11-23T10:00:00.000000Z",\
        "kind":"enter","lastSeen":"2026-11-23T10:00:05.500000Z","latitude":51.5007,"longitude":-0.1246,\
        "major":1,"minor":\(index % 65536),"proximity":"near","rssi":-67.5,"sightingId":"\(id)",\
        "stationId":"bench-cafe","uuid":"21EECF71-D5C7-4A00-9B90-27C94B5146EA"}
        """
    return OutboxItem(sightingID: id, kind: .enter, body: body, bikeID: "bike-\(index % 5000)", seenAt: 1_795_000_000_000, rssi: -67.5, proximity: "near")
}

let outbox = try Outbox(path: directory + "/outbox.sqlite", capacity: 10 * sightings)
let single = (0..<sightings).map { item($0, batch: "single") }
let batched = (0..<sightings).map { item($0, batch: "batch") }

// The floor: append the body and fsync, once per sighting.
let floorPath = directory + "/floor.log"
let descriptor = open(floorPath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
guard descriptor >= 0 else { fail("cannot open \(floorPath)") }
let floorSeconds = seconds {
    for entry in single {
        let written = entry.body.utf8.withContiguousStorageIfAvailable { write(descriptor, $0.baseAddress, $0.count) } ?? -1
        guard written == entry.body.utf8.count, fsync(descriptor) == 0 else { fail("write or fsync failed: errno \(errno)") }
    }
}
close(descriptor)

var inserted = 0
let singleSeconds = try seconds {
    for entry in single { inserted += try outbox.enqueue([entry], now: 1_795_000_000_000).inserted }
}
let batchSeconds = try seconds {
    var start = 0
    while start < batched.count {
        let end = min(start + 64, batched.count)
        inserted += try outbox.enqueue(Array(batched[start..<end]), now: 1_795_000_000_000).inserted
        start = end
    }
}
let depth = try outbox.statistics().depth
guard inserted == 2 * sightings, depth == 2 * sightings else { fail("inserted \(inserted), depth \(depth), expected \(2 * sightings)") }

print("outbox: \(directory), \(sightings) sightings each way, bodies of \(single[0].body.utf8.count) bytes")
print("what                                          µs/sighting   sightings/s   vs write+fsync")
for (name, elapsed) in [
    ("write(2) + fsync(2) per sighting (the floor)", floorSeconds),
    ("Outbox.enqueue, one sighting per commit", singleSeconds),
    ("Outbox.enqueue, 64 sightings per commit", batchSeconds),
] {
    print(name.padding(toLength: 46, withPad: " ", startingAt: 0)
        + String(format: "%11.1f  %12.0f  %14.2fx", elapsed * 1e6 / Double(sightings), Double(sightings) / elapsed, elapsed / floorSeconds))
}
