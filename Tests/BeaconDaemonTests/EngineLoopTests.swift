import BeaconEngine
import BeaconOutbox
import BeaconTestSupport
import BeaconWire
import Foundation
import LockedValue
import Logging
import Synchronization
import Testing

@testable import BeaconDaemon

/// The engine's loop a pass at a time, on monotonic times the test chooses: no thread, no sleeping, no real time.
@Suite(.timeLimit(.minutes(20))) struct EngineLoopTests {
    /// A capture source the test feeds by hand: nothing runs on start; its time and state are the test's.
    final class HandFedCapture: CaptureSource {
        let status = CaptureStatus(backend: "test", sources: [])
        private let time = LockedValue(CaptureTime(nanosecondsSinceEpoch: 1_717_228_800_000_000_000))
        func start(into ring: AdvertRing) {}
        func stop() {}
        func waitUntilStopped() async {}
        func now() -> CaptureTime { time.withLock { $0 } }
        var timeBase: CaptureTimeBase { .wall }
        func move(by seconds: Int64) {
            time.withLock {
                $0 = CaptureTime(nanosecondsSinceEpoch: $0.nanosecondsSinceEpoch + seconds * 1_000_000_000)
            }
        }
    }

    final class Counter: Sendable {
        private let count = Atomic(0)
        func add() { count.add(1, ordering: .relaxed) }
        var value: Int { count.load(ordering: .relaxed) }
    }

    struct Station {
        let capture = HandFedCapture()
        let ring = AdvertRing(capacity: 64)
        let outbox: Outbox
        let service: EngineService
        let nudges = Counter()

        init(directory: TemporaryDirectory, exitWhenDrained: Bool = false) throws {
            outbox = try Outbox(path: directory.file("outbox.sqlite"))
            let set = MissingBikeSet(
                list: BikeList(entries: [.init(id: "bike-7", minor: 7, missing: true)]), regions: [.findMyBike])
            let nudges = self.nudges
            service = EngineService(
                configuration: EngineConfiguration(stationID: "loop"), location: (51.5, -0.1), ring: ring,
                capture: capture, mailbox: MissingSetMailbox(set), outbox: outbox,
                nudgePoster: { nudges.add() }, exitWhenDrained: exitWhenDrained,
                onSighting: { _ in }, logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }),
                tick: .seconds(1))
        }

        /// Bike 7's beacon heard at the capture's time now.
        func hear() {
            var producer = ring.makeProducer()
            let beacon = IBeacon(
                uuid: BeaconRegion.findMyBike.uuid, major: BeaconRegion.findMyBike.major ?? 0, minor: 7,
                measuredPower: -59)
            producer.push(BeaconAdvert(time: capture.now(), beacon: beacon, rssi: -60, adapter: 0))
        }

        func queued() throws -> [SightingKind] {
            var kinds: [SightingKind] = []
            while let entry = try outbox.oldest(for: Outbox.registry) {
                kinds.append(entry.kind)
                try outbox.markDelivered(entry, sink: Outbox.registry, now: 0)
            }
            return kinds
        }
    }

    @Test func aSightingIsCommittedInThePassThatReadsItsAdvertAndTheClockMovesOnlyOnATick() throws {
        let directory = try TemporaryDirectory("engine-loop")
        defer { directory.remove() }
        let station = try Station(directory: directory)
        let loop = EngineLoop(station.service, monotonic: 0)

        station.hear()
        #expect(loop.pass(monotonic: { 100_000_000 }) == .busy)
        #expect(try station.queued() == [.enter], "committed in the pass that read it")
        #expect(station.nudges.value == 1, "the poster is nudged")
        #expect(loop.pass(monotonic: { 200_000_000 }) == .idle)

        // Two minutes of silence by the capture's clock, but no tick yet: nothing is timed out.
        station.capture.move(by: 120)
        #expect(loop.pass(monotonic: { 999_999_999 }) == .idle)
        #expect(try station.queued() == [])
        // The tick: the visit is closed by the capture's time.
        #expect(loop.pass(monotonic: { 1_000_000_000 }) == .idle)
        #expect(try station.queued() == [.exit])
        #expect(station.service.status.current.heartbeat == 1_000_000_000, "the tick published the status")
    }

    @Test func aFinishedReplayClosesItsVisitsAndIsDrainedOnlyOnceTheOutboxIsEmpty() throws {
        let directory = try TemporaryDirectory("engine-loop")
        defer { directory.remove() }
        let station = try Station(directory: directory, exitWhenDrained: true)
        let loop = EngineLoop(station.service, monotonic: 0)

        station.hear()
        #expect(loop.pass(monotonic: { 0 }) == .busy)
        station.capture.status.update { $0.state = .finished }
        // The replay is over: the open visit is closed at its last-seen time, not by the clock, and the loop keeps
        // going while the outbox holds the enter and the exit.
        #expect(loop.pass(monotonic: { 1 }) == .idle)
        #expect(loop.finished)
        #expect(try station.outbox.statistics().depth == 2)
        #expect(loop.pass(monotonic: { 2 }) == .idle)
        #expect(try station.queued() == [.enter, .exit])
        #expect(loop.pass(monotonic: { 3 }) == .drained)
    }

    @Test func aStoppedCaptureLeavesVisitsOpenAndTheRestOfTheRingIsCommitted() throws {
        let directory = try TemporaryDirectory("engine-loop")
        defer { directory.remove() }
        let station = try Station(directory: directory)
        let loop = EngineLoop(station.service, monotonic: 0)

        station.capture.status.update { $0.state = .stopped }
        station.capture.move(by: 600)
        station.hear()
        loop.end(monotonic: 5_000_000_000)
        #expect(try station.queued() == [.enter], "the ring's last advert is committed; the visit is not closed")
        #expect(loop.pending.isEmpty)
    }
}
