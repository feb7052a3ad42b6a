// The live capture path and the stall watchdog, measured without a radio (this machine has no Bluetooth).
//
// 1. CPU per advert: H4 LE Advertising Report events written into a SOCK_SEQPACKET socketpair (datagrams,
//    one packet per read, as a raw HCI socket delivers them) and taken out by what the daemon's capture thread
//    runs: `HCICapture.poll` → `AdvertDecoder` → `BeaconAdvert` → the advert ring (drained by a second
//    thread). The yardstick, in the same run: a bare read(2) loop on the same socketpair, which is the kernel's
//    share and the least any live path can cost. CPU time of the reading thread (CLOCK_THREAD_CPUTIME_ID).
// 2. Paced adverts, as a radio delivers them (2,000 and 200 a second, evenly spread): the capture thread's wake-ups
//    per second (context switches of the reading thread, getrusage RUSAGE_THREAD), its CPU per advert, and the
//    latency from an advert's write to its arrival in the ring (p50, p99), with adverts read as each comes
//    (gather 0, what beacond did) and gathered 50 ms after the first wakes the thread, then read with recvmmsg.
//    Then, at the same rates, from an advert's write to the commit of the sighting it causes, through the daemon's
//    capture loop, EngineService and a real outbox (CommitLatency.swift), before and after gathering.
// 3. Watchdog reaction: a controller that answers commands and sends one report after each scan enable (as
//    btvirt does), then goes silent. The time from the end of the allowed silence to the first command of the
//    rescan is the watchdog's reaction.
import BeaconCapture
import BeaconEngine
import BeaconWire
import Foundation
import Synchronization

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("LiveBenchmark: \(message)\n".utf8))
    exit(1)
}

func threadCPU() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
    return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
}

func monotonic() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
}

/// An LE Advertising Report event (H4): an iBeacon (minor `n`) when n % 10 < 3, otherwise a phone's
/// manufacturer data, roughly the café mix (21 of the 64 packets the feeder cycles through).
func report(_ n: Int) -> [UInt8] {
    let data: [UInt8]
    if n % 10 < 3 {
        let uuid: [UInt8] = [0xE2, 0xC5, 0x6D, 0xB5, 0xDF, 0xFB, 0x48, 0xD2, 0xB0, 0x60, 0xD0, 0xF5, 0xA7, 0x10, 0x96, 0xE0]
        data = [0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15] + uuid + [0x00, 0x01, UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF), 0xC5]
    } else {
        data = [0x02, 0x01, 0x1A, 0x0B, 0xFF, 0x4C, 0x00, 0x10, 0x06, 0x13, 0x1E, UInt8(n & 0xFF), 0x6E, 0x4B, 0x38]
    }
    let body: [UInt8] = [0x01, 0x00, 0x01, UInt8(n & 0xFF), 0x22, 0x33, 0x44, 0x55, 0x66, UInt8(data.count)] + data + [0xC0]
    return [0x04, 0x3E, UInt8(body.count + 1), 0x02] + body
}

func socketPair() -> (Int32, Int32) {
    var pair: [Int32] = [0, 0]
    guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &pair) == 0 else { fail("socketpair: \(errno)") }
    return (pair[0], pair[1])
}

/// Writes `count` reports into `fd` from a thread of its own.
func feed(_ fd: Int32, count: Int) -> Thread {
    let packets = (0..<64).map(report)
    let thread = Thread {
        for n in 0..<count {
            let packet = packets[n % packets.count]
            _ = packet.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        }
    }
    thread.start()
    return thread
}

// ---------------------------------------------------------------- options
struct Options {
    var adverts = 1_000_000
    var iterations = 5
    var rounds = 21
    var pacedSeconds = 20.0

    init(_ arguments: [String]) {
        var arguments = arguments[...]
        while let argument = arguments.popFirst() {
            switch argument {
            case "--adverts": adverts = Int(arguments.popFirst() ?? "") ?? adverts
            case "--iterations": iterations = Int(arguments.popFirst() ?? "") ?? iterations
            case "--rounds": rounds = Int(arguments.popFirst() ?? "") ?? rounds
            case "--paced-seconds": pacedSeconds = Double(arguments.popFirst() ?? "") ?? pacedSeconds
            default: fail("usage: LiveBenchmark [--adverts N] [--iterations N] [--rounds N] [--paced-seconds S]")
            }
        }
    }
}
let options = Options(Array(CommandLine.arguments.dropFirst()))
let adverts = options.adverts, iterations = options.iterations, rounds = options.rounds, pacedSeconds = options.pacedSeconds

// ---------------------------------------------------------------- 1. CPU per advert
/// The yardstick: read(2) every packet, nothing else. CPU ns of this thread.
func bareReads(_ adverts: Int) -> Int64 {
    let (near, far) = socketPair()
    defer { close(near); close(far) }
    var buffer = [UInt8](repeating: 0, count: 1_024)
    let writer = feed(far, count: adverts)
    _ = writer
    let start = threadCPU()
    var got = 0
    var checksum = 0
    while got < adverts {
        let count = buffer.withUnsafeMutableBytes { read(near, $0.baseAddress, $0.count) }
        if count > 0 {
            got += 1
            checksum &+= Int(buffer[13])
        }
    }
    let cpu = threadCPU() - start
    if checksum == 42 { print("") }
    return cpu
}

/// The live path: poll, decode, BeaconAdvert, ring (a consumer thread drains it). CPU ns of this thread,
/// and the iBeacons that reached the ring.
func livePath(_ adverts: Int) -> (Int64, UInt64) {
    let (near, far) = socketPair()
    defer { close(far) }
    let capture = HCICapture(sockets: [HCISocket(descriptor: near, deviceID: 0)], settings: CaptureSettings(intervalMilliseconds: 100, windowMilliseconds: 100))
    let ring = AdvertRing(capacity: 4_096)
    let done = Atomic<Bool>(false)
    let consumer = Thread { [ring] in
        var consumer = ring.makeConsumer()
        var minors = 0
        while !done.load(ordering: .acquiring) || ring.statistics.depth > 0 { _ = consumer.drain(limit: 4_096) { minors &+= Int($0.beacon.minor) } }
        if minors == 42 { print("") }
    }
    consumer.start()
    var producer = ring.makeProducer()
    var decoder = AdvertDecoder()
    let writer = feed(far, count: adverts)
    _ = writer
    let start = threadCPU()
    var got = 0
    var beacons: UInt64 = 0
    while got < adverts {
        got += (try? capture.poll(timeoutMilliseconds: 100) { record in
            decoder.decode(record) { advert in
                if let beacon = BeaconAdvert(advert) {
                    producer.push(beacon)
                    beacons += 1
                }
            }
        }) ?? 0
    }
    let cpu = threadCPU() - start
    done.store(true, ordering: .releasing)
    return (cpu, beacons)
}

var bestBare = Int64.max
var bestLive = Int64.max
for _ in 0..<iterations {
    bestBare = min(bestBare, bareReads(adverts))
    let (cpu, beacons) = livePath(adverts)
    let expected = (0..<adverts).filter { $0 % 64 % 10 < 3 }.count
    guard beacons == UInt64(expected) else { fail("the live path lost adverts: \(beacons) iBeacons of \(expected)") }
    bestLive = min(bestLive, cpu)
}
let bareNs = Double(bestBare) / Double(adverts)
let liveNs = Double(bestLive) / Double(adverts)
print("CPU per advert (reading thread, best of \(iterations), \(adverts) adverts, a third of them iBeacons):")
print(String(format: "  read(2) alone (the kernel's share)      %7.1f ns/advert   1.00x", bareNs))
print(String(format: "  HCICapture.poll + decode + ring          %7.1f ns/advert   %.2fx", liveNs, liveNs / bareNs))
print(String(format: "  beacond's own share                      %7.1f ns/advert", liveNs - bareNs))

// ---------------------------------------------------------------- 2. paced adverts
/// An iBeacon report whose minor is `n` (each unique in a paced run, to find its send time).
func beaconReport(_ n: Int) -> [UInt8] {
    let uuid: [UInt8] = [0xE2, 0xC5, 0x6D, 0xB5, 0xDF, 0xFB, 0x48, 0xD2, 0xB0, 0x60, 0xD0, 0xF5, 0xA7, 0x10, 0x96, 0xE0]
    let data: [UInt8] = [0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15] + uuid + [0x00, 0x01, UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF), 0xC5]
    let body: [UInt8] = [0x01, 0x00, 0x01, UInt8(n & 0xFF), 0x22, 0x33, 0x44, 0x55, 0x66, UInt8(data.count)] + data + [0xC0]
    return [0x04, 0x3E, UInt8(body.count + 1), 0x02] + body
}

/// Context switches of the calling thread so far: each is a wake-up (or a preemption) of it.
func threadSwitches() -> Int {
    var usage = rusage()
    getrusage(__rusage_who_t(1), &usage)  // RUSAGE_THREAD (a GNU extension Glibc's module does not name)
    return usage.ru_nvcsw + usage.ru_nivcsw
}

struct Paced {
    var wakeupsPerSecond: Double
    var cpuPerAdvert: Double
    var p50: Double
    var p99: Double
}

func paced(rate: Int, seconds: Double, gather: Int) -> Paced {
    let count = min(Int(Double(rate) * seconds), 65_536)
    let (near, far) = socketPair()
    defer { close(far) }
    var settings = CaptureSettings(intervalMilliseconds: 100, windowMilliseconds: 100)
    settings.gatherMilliseconds = gather
    let capture = HCICapture(sockets: [HCISocket(descriptor: near, deviceID: 0)], settings: settings)
    /// Send times by minor, written by the writer before each write and read by the consumer after the advert has
    /// come through the socket and the ring (both publish what was written before).
    struct SendTimes: @unchecked Sendable { let times: UnsafeMutablePointer<Int64> }
    let sent = SendTimes(times: .allocate(capacity: count))
    defer { sent.times.deallocate() }
    let packets = (0..<count).map(beaconReport)
    let ring = AdvertRing(capacity: 4_096)
    let done = Atomic<Bool>(false)
    let latencies = Mutex<[Int64]>([])
    let consumer = Thread { [ring] in
        var consumer = ring.makeConsumer()
        var seen: [Int64] = []
        seen.reserveCapacity(count)
        while !done.load(ordering: .acquiring) || ring.statistics.depth > 0 {
            let now = monotonic()
            if consumer.drain(limit: 4_096, { seen.append(now - sent.times[Int($0.beacon.minor)]) }) == 0 { usleep(1_000) }
        }
        latencies.withLock { $0 = seen }
    }
    consumer.start()
    let start = monotonic() + 20_000_000
    let writer = Thread {
        for n in 0..<count {
            var due = timespec(tv_sec: Int((start + Int64(n) * 1_000_000_000 / Int64(rate)) / 1_000_000_000), tv_nsec: Int((start + Int64(n) * 1_000_000_000 / Int64(rate)) % 1_000_000_000))
            clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &due, nil)
            sent.times[n] = monotonic()
            _ = packets[n].withUnsafeBytes { write(far, $0.baseAddress, $0.count) }
        }
    }
    writer.start()
    var producer = ring.makeProducer()
    var decoder = AdvertDecoder()
    let switchesBefore = threadSwitches()
    let cpuBefore = threadCPU()
    let wallBefore = monotonic()
    var got = 0
    while got < count {
        _ = try? capture.poll(timeoutMilliseconds: 200) { record in
            decoder.decode(record) { advert in
                if let beacon = BeaconAdvert(advert) {
                    producer.push(beacon)
                    got += 1
                }
            }
        }
    }
    let cpu = threadCPU() - cpuBefore
    let wall = Double(monotonic() - wallBefore) / 1e9
    let switches = threadSwitches() - switchesBefore
    done.store(true, ordering: .releasing)
    while latencies.withLock({ $0.isEmpty }) { usleep(1_000) }
    let sorted = latencies.withLock { $0 }.sorted()
    return Paced(
        wakeupsPerSecond: Double(switches) / wall, cpuPerAdvert: Double(cpu) / Double(count),
        p50: Double(sorted[sorted.count / 2]) / 1e6, p99: Double(sorted[sorted.count * 99 / 100]) / 1e6)
}

print("Paced adverts (\(pacedSeconds) s each, a fake radio on a socketpair): the capture thread")
print("  rate      gather   wake-ups/s   CPU ns/advert   write -> ring p50   p99")
for rate in [2_000, 200] {
    var results: [Int: Paced] = [:]
    for gather in [0, 50] {
        let result = paced(rate: rate, seconds: pacedSeconds, gather: gather)
        results[gather] = result
        print(String(format: "  %5d/s   %3d ms   %10.1f   %13.0f   %14.2f ms   %6.2f ms", rate, gather, result.wakeupsPerSecond, result.cpuPerAdvert, result.p50, result.p99))
    }
    if let before = results[0], let after = results[50] {
        print(String(format: "  %5d/s   gathered: %.2fx the wake-ups, %.2fx the CPU per advert", rate, after.wakeupsPerSecond / before.wakeupsPerSecond,
                     after.cpuPerAdvert / before.cpuPerAdvert))
        if rate == 2_000 && after.wakeupsPerSecond > 50 { fail("more than 50 wake-ups a second at 2,000 adverts/s: \(after.wakeupsPerSecond)") }
    }
}

print("Advert to committed sighting (every 50th minor a missing bike, each advert of one a new visit; the daemon's")
print("capture loop, EngineService and a real outbox, \(pacedSeconds) s each)")
print("  rate      gather   advert -> commit p50   p99        sightings")
for rate in [2_000, 200] {
    for gather in [0, 50] {
        let result = await commitLatency(rate: rate, seconds: pacedSeconds, gather: gather)
        print(String(format: "  %5d/s   %3d ms   %17.2f ms   %6.2f ms   %d", rate, gather, result.p50, result.p99, result.samples))
    }
}

// ---------------------------------------------------------------- 3. watchdog reaction
/// The far side of the socket: answers every command (LE features: legacy), sends one report after each
/// scan enable, and notes when the first command after each report arrived.
final class Responder: @unchecked Sendable {
    let far: Int32
    let firstCommandAfterReport = Mutex<[(reported: Int64, acted: Int64)]>([])
    let stop = Atomic<Bool>(false)
    init(far: Int32) { self.far = far }

    func run() {
        var buffer = [UInt8](repeating: 0, count: 300)
        var reportedAt: Int64?
        while !stop.load(ordering: .relaxed) {
            var poller = pollfd(fd: far, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 20) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { read(far, $0.baseAddress, $0.count) }
            guard count >= 4, buffer[0] == 0x01 else { continue }
            let now = monotonic()
            if let reported = reportedAt {
                firstCommandAfterReport.withLock { $0.append((reported, now)) }
                reportedAt = nil
            }
            let opcode = UInt16(buffer[1]) | UInt16(buffer[2]) << 8
            var parameters: [UInt8] = [0]
            if opcode == 0x2003 { parameters += [0, 0, 0, 0, 0, 0, 0, 0] }
            let answer: [UInt8] = [0x04, 0x0E, UInt8(3 + parameters.count), 0x01, buffer[1], buffer[2]] + parameters
            _ = answer.withUnsafeBytes { write(far, $0.baseAddress, $0.count) }
            if opcode == 0x200C && buffer[4] == 1 {
                let packet = report(0)
                _ = packet.withUnsafeBytes { write(far, $0.baseAddress, $0.count) }
                reportedAt = monotonic()
            }
        }
    }
}

let stallMilliseconds: Int64 = 100
let (near, far) = socketPair()
let responder = Responder(far: far)
Thread { responder.run() }.start()
let policy = RecoveryLadder.Policy(
    stallAfter: stallMilliseconds * 1_000_000, stepGrace: 10_000_000_000, backoffBase: 60_000_000_000, backoffCap: 60_000_000_000)
let capture = HCICapture(
    sockets: [HCISocket(descriptor: near, deviceID: 0)],
    settings: CaptureSettings(intervalMilliseconds: 100, windowMilliseconds: 100, recovery: policy))
do { try capture.start() } catch { fail("start: \(error)") }
while responder.firstCommandAfterReport.withLock({ $0.count }) < rounds {
    _ = try? capture.poll(timeoutMilliseconds: 1_000) { _ in }
}
responder.stop.store(true, ordering: .relaxed)
let reactions = responder.firstCommandAfterReport.withLock { $0 }.map { Double($0.acted - $0.reported - stallMilliseconds * 1_000_000) / 1e6 }.sorted()
print("Watchdog reaction (stall after \(stallMilliseconds) ms of silence; \(reactions.count) stalls):")
print(String(format: "  from the end of the allowed silence to the first rescan command: median %.2f ms, max %.2f ms, min %.2f ms",
    reactions[reactions.count / 2], reactions.last!, reactions.first!))
