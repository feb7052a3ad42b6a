// A process that does what the daemon does with sightings, to be killed: opens the outbox, queues the same
// sightings every time it starts (as a restarted daemon replaying a capture would), and posts until the
// outbox is empty, then exits 0. The crash test SIGKILLs it at random moments and restarts it.
//
// OutboxCrashChild OUTBOX_PATH REGISTRY_URL COUNT
import AsyncHTTPClient
import BeaconDelivery
import BeaconEngine
import BeaconOutbox
import BeaconRegistryClient
import BeaconWire
import DaemonSupport
import Foundation
import Logging
import StationSettings

let arguments = CommandLine.arguments
guard arguments.count == 4, let count = UInt16(arguments[3]) else {
    FileHandle.standardError.write(Data("usage: OutboxCrashChild OUTBOX_PATH REGISTRY_URL COUNT\n".utf8))
    exit(64)
}

// The same sightings every run: `count` bikes heard once each, then their exits.
let origin = CaptureTime(nanosecondsSinceEpoch: 1_717_228_800_000_000_000)
let list = BikeList(entries: (0..<count).map { .init(id: "bike-\($0)", minor: $0, missing: true) })
var engine = RangingEngine<CaptureTime>(
    configuration: EngineConfiguration(stationID: "crash-test"),
    missing: MissingBikeSet(list: list, regions: [.findMyBike]),
    startingAt: origin)
var sightings: [Sighting] = []
for minor in 0..<count {
    let time = origin.advanced(by: .milliseconds(Int64(minor) * 100))
    let beacon = IBeacon(uuid: BeaconRegion.findMyBike.uuid, major: 1, minor: minor, measuredPower: -59)
    engine.observe(BeaconAdvert(time: time, beacon: beacon, rssi: -60, adapter: 0), at: time, into: &sightings)
}
engine.finish(into: &sightings)

let configuration = RegistryConfiguration(
    location: .http(base: arguments[2]), stationID: "crash-test", connectTimeout: .milliseconds(500),
    requestTimeout: .seconds(2))
let now: @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) }
let outbox = try Outbox(path: arguments[1])
try outbox.enqueue(
    sightings.map { OutgoingSighting.outboxItem($0, stationID: "crash-test", latitude: 1, longitude: 2) }, now: now())
let client = HTTPRegistry.makeHTTPClient(configuration)
let poster = SightingPoster(
    outbox: outbox, sink: HTTPRegistry(configuration: configuration, client: client), clock: ContinuousClock(),
    backoff: Backoff(base: .milliseconds(10), cap: .milliseconds(100)), logger: Logger(label: "crash-child"),
    wallClock: now)
let task = Task { await poster.run(idlePoll: .milliseconds(50)) }
while try outbox.statistics().depth > 0 { try await Task.sleep(for: .milliseconds(10)) }
task.cancel()
await task.value
try await client.shutdown() as Void
print("delivered \(poster.statistics.delivered)")
