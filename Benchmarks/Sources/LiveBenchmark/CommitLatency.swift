import BeaconCapture
import BeaconDaemon
import BeaconEngine
import BeaconOutbox
import BeaconWire
import Foundation
import Logging
import Synchronization

/// A capture source around HCICapture on the near end of a socketpair: the capture thread as the daemon runs it
/// (LiveCapture's loop: poll, decode, push), without a radio.
final class SocketCapture: CaptureSource, @unchecked Sendable {
    let status = CaptureStatus(backend: "bench", sources: ["hci0"])
    private let capture: HCICapture
    private let stopping = Atomic<Bool>(false)
    private let stopped = Atomic<Bool>(false)

    init(descriptor: Int32, gather: Int) {
        var settings = CaptureSettings(intervalMilliseconds: 100, windowMilliseconds: 100)
        settings.gatherMilliseconds = gather
        capture = HCICapture(sockets: [HCISocket(descriptor: descriptor, deviceID: 0)], settings: settings)
    }

    func start(into ring: AdvertRing) {
        Thread { [self] in
            var producer = ring.makeProducer()
            var decoder = AdvertDecoder()
            while !stopping.load(ordering: .relaxed) {
                _ = try? capture.poll(timeoutMilliseconds: 200) { record in
                    decoder.decode(record) { advert in
                        if let beacon = BeaconAdvert(advert) { producer.push(beacon) }
                    }
                }
            }
            stopped.store(true, ordering: .releasing)
        }.start()
    }

    func stop() { stopping.store(true, ordering: .relaxed) }
    func waitUntilStopped() async { while !stopped.load(ordering: .acquiring) { try? await Task.sleep(for: .milliseconds(10)) } }
    func now() -> CaptureTime { CaptureTime(nanosecondsSinceEpoch: monotonic()) }
    var timeBase: CaptureTimeBase { .monotonic }
}

/// An iBeacon report in the FindMyBike region whose minor is `n`.
func findMyBikeReport(_ n: Int) -> [UInt8] {
    let uuid: [UInt8] = [0x21, 0xEE, 0xCF, 0x71, 0xD5, 0xC7, 0x4A, 0x00, 0x9B, 0x90, 0x27, 0xC9, 0x4B, 0x51, 0x46, 0xEA]
    let data: [UInt8] = [0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15] + uuid + [0x00, 0x01, UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF), 0xC5]
    let body: [UInt8] = [0x01, 0x00, 0x01, UInt8(n & 0xFF), 0x22, 0x33, 0x44, 0x55, 0x66, UInt8(data.count)] + data + [0xC0]
    return [0x04, 0x3E, UInt8(body.count + 1), 0x02] + body
}

/// From an advert's write to the commit of the sighting it causes, through the daemon's own capture loop,
/// EngineService and a real outbox (synchronous=FULL, in a temporary directory). Every `every`-th minor is a
/// missing bike, so each of its adverts opens a visit whose enter is committed; the commit time is when the
/// outbox has taken it (EngineService nudges the poster right after).
func commitLatency(rate: Int, seconds: Double, gather: Int, every: Int = 50) async -> (p50: Double, p99: Double, samples: Int) {
    let count = min(Int(Double(rate) * seconds), 65_536)
    let (near, far) = socketPair()
    defer { close(far) }
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("live-commit-\(UUID().uuidString)").path
    try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    guard let outbox = try? Outbox(path: directory + "/outbox.sqlite") else { fail("outbox") }
    let list = BikeList(entries: stride(from: 0, to: count, by: every).map { .init(id: "b\($0)", minor: UInt16($0), missing: true) })
    let mailbox = MissingSetMailbox(MissingBikeSet(list: list, regions: [.findMyBike]))
    let sent = UnsafeMutablePointer<Int64>.allocate(capacity: count)
    defer { sent.deallocate() }
    struct Shared: @unchecked Sendable { let sent: UnsafeMutablePointer<Int64> }
    let shared = Shared(sent: sent)
    let state = Mutex((waiting: [Int](), latencies: [Int64]()))
    var logger = Logger(label: "bench")
    logger.logLevel = .critical
    let capture = SocketCapture(descriptor: near, gather: gather)
    let ring = AdvertRing(capacity: 4_096)
    let engine = EngineService(
        configuration: EngineConfiguration(stationID: "bench"), location: (0, 0), ring: ring, capture: capture, mailbox: mailbox,
        outbox: outbox,
        nudgePoster: {
            let now = monotonic()
            state.withLock { state in
                for minor in state.waiting { state.latencies.append(now - shared.sent[minor]) }
                state.waiting.removeAll()
            }
        },
        exitWhenDrained: false, onSighting: { sighting in state.withLock { $0.waiting.append(Int(sighting.beacon.minor)) } }, logger: logger)
    capture.start(into: ring)
    let running = Task { try await engine.run() }
    let packets = (0..<count).map(findMyBikeReport)
    let start = monotonic() + 50_000_000
    let written = Atomic<Bool>(false)
    let writer = Thread {
        defer { written.store(true, ordering: .releasing) }
        for n in 0..<count {
            let at = start + Int64(n) * 1_000_000_000 / Int64(rate)
            var due = timespec(tv_sec: Int(at / 1_000_000_000), tv_nsec: Int(at % 1_000_000_000))
            clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &due, nil)
            shared.sent[n] = monotonic()
            _ = packets[n].withUnsafeBytes { write(far, $0.baseAddress, $0.count) }
        }
    }
    writer.start()
    let expected = (count + every - 1) / every
    let deadline = monotonic() + Int64((seconds + 10) * 1e9)
    while state.withLock({ $0.latencies.count }) < expected && monotonic() < deadline { try? await Task.sleep(for: .milliseconds(50)) }
    // The writer may still be sending the adverts after the last missing bike's; `sent` and the socket must outlive it.
    while !written.load(ordering: .acquiring) { try? await Task.sleep(for: .milliseconds(10)) }
    running.cancel()
    _ = await running.result
    capture.stop()
    await capture.waitUntilStopped()
    let sorted = state.withLock { $0.latencies }.sorted()
    guard !sorted.isEmpty else { fail("no sighting committed") }
    return (Double(sorted[sorted.count / 2]) / 1e6, Double(sorted[sorted.count * 99 / 100]) / 1e6, sorted.count)
}
