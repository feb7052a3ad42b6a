public import BeaconCapture
public import BeaconEngine
import BeaconPOSIX
public import BeaconWire
import LockedValue
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// A capture source that plays recorded files, in order, instead of listening to a radio: the tests', the
/// demo's and the field debugger's way to run the whole daemon.
///
/// `speed` 1 keeps the capture's own pacing, 10 plays ten times faster, 0 as fast as the engine takes it.
/// Unlike a radio, a replay never loses an advert to a full ring: it waits for the engine instead, so the
/// same file always gives the same sightings.
public final class ReplayCapture: CaptureSource {
    public let status: CaptureStatus
    private let files: UncheckedFiles
    private let speed: Double
    private let thread = LoopThread()
    private let clock: StationClock
    /// The capture time of the last advert pushed, and the pacing origin (capture time, monotonic time).
    private let lastPushed = Atomic<Int64>(.min)
    private let origin = LockedValue<(capture: Int64, monotonic: Int64)?>(nil)

    /// Opens every file now, so a bad path fails before the daemon starts.
    public init(paths: [String], speed: Double, clock: StationClock = .system) throws(CaptureFileError) {
        files = UncheckedFiles(try paths.map { path throws(CaptureFileError) in try CaptureFile(path: path) })
        self.speed = max(0, speed)
        status = CaptureStatus(backend: "replay", sources: paths)
        self.clock = clock
    }

    public func start(into ring: AdvertRing) { thread.start(name: "beacond-replay") { [self] in play(into: ring) } }

    public func stop() { thread.stop() }

    public func waitUntilStopped() async { await thread.waitUntilStopped() }

    /// A replay runs on the capture's own clock, wall time as recorded, so the same file always gives the same
    /// sightings with the same ids.
    public var timeBase: CaptureTimeBase { .wall }

    /// Only when paced: at full speed the engine's sweeps come with the adverts alone, as `beacond replay`'s do.
    public var timePassesBetweenAdverts: Bool { speed > 0 }

    public func now() -> CaptureTime {
        let last = lastPushed.load(ordering: .acquiring)
        // A replay that is over (or stopping) has no time beyond its last advert.
        guard speed > 0, thread.running, !thread.stopRequested,
            let origin = origin.withLock({ $0 })
        else {
            return CaptureTime(nanosecondsSinceEpoch: last == .min ? 0 : last)
        }
        // Between adverts a paced replay's time moves on as a radio's would, so visits can time out.
        let played = Int64(Double(clock.monotonicNanoseconds() - origin.monotonic) * speed)
        return CaptureTime(nanosecondsSinceEpoch: max(last, origin.capture &+ played))
    }

    private struct Stop: Error {}

    private func play(into ring: AdvertRing) {
        var producer = ring.makeProducer()
        status.update { $0.state = .running }
        var fallback = CaptureTime(nanosecondsSinceEpoch: 0)
        var sinceSnapshot = 0
        var decode = DecodeCounters()
        var beacons: UInt64 = 0
        var adverts: UInt64 = 0
        do {
            for file in files.files {
                let before = decode
                // The status snapshot: every 1,024 adverts, and before each pacing sleep.
                func publish() {
                    sinceSnapshot = 0
                    let counters = file.counters
                    status.update {
                        $0.decode = before
                        $0.decode.add(counters)
                        $0.adverts = adverts
                        $0.beaconAdverts = beacons
                    }
                }
                decode.add(
                    try file.forEachAdvert { advert, _ in
                        if thread.stopRequested { throw Stop() }
                        adverts += 1
                        sinceSnapshot += 1
                        if sinceSnapshot >= 1024 { publish() }
                        guard let beaconAdvert = BeaconAdvert(advert, fallbackTime: fallback) else { return }
                        fallback = max(fallback, beaconAdvert.time)
                        try pace(to: beaconAdvert.time, beforeSleeping: publish)
                        try waitForRoom(in: ring)
                        producer.push(beaconAdvert)
                        beacons += 1
                        lastPushed.store(
                            max(lastPushed.load(ordering: .relaxed), beaconAdvert.time.nanosecondsSinceEpoch),
                            ordering: .releasing)
                    })
            }
            status.update {
                $0.state = .finished
                $0.decode = decode
                $0.adverts = adverts
                $0.beaconAdverts = beacons
            }
        } catch is Stop {
            status.update {
                $0.state = .stopped
                $0.adverts = adverts
                $0.beaconAdverts = beacons
            }
        } catch {
            status.update {
                $0.state = .failed
                $0.lastError = "\(error)"
            }
        }
    }

    /// A paced replay sleeps at least this long at a time, so adverts due within it are pushed together, as a
    /// radio's arrive in bursts: at 2,000 adverts/s that is about 40 wake-ups a second instead of 2,000, and
    /// no advert is more than this late.
    static let pacingQuantumNanoseconds: Int64 = 25_000_000

    /// Sleeps until the advert is due; at most 100 ms at a time, so a stop request is seen promptly.
    private func pace(to time: CaptureTime, beforeSleeping: () -> Void) throws {
        guard speed > 0 else { return }
        let start = origin.withLock { origin in
            if origin == nil { origin = (time.nanosecondsSinceEpoch, clock.monotonicNanoseconds()) }
            return origin!
        }
        let due = start.monotonic + Int64(Double(time.nanosecondsSinceEpoch - start.capture) / speed)
        while true {
            if thread.stopRequested { throw Stop() }
            let wait = due - clock.monotonicNanoseconds()
            guard wait > 0 else { return }
            beforeSleeping()
            clock.sleep(min(max(wait, Self.pacingQuantumNanoseconds), 100_000_000))
        }
    }

    /// A replay waits for the engine rather than overwrite adverts it has not read.
    private func waitForRoom(in ring: AdvertRing) throws {
        while ring.statistics.depth >= UInt64(ring.capacity - 1) {
            if thread.stopRequested { throw Stop() }
            clock.sleep(200_000)
        }
    }
}

/// The files are only ever touched by the one replay thread once it has started.
private struct UncheckedFiles: @unchecked Sendable {
    let files: [CaptureFile]
    init(_ files: [CaptureFile]) { self.files = files }
}
