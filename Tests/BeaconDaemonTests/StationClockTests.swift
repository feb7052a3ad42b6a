import BeaconControl
import BeaconOutbox
import BeaconTestSupport
import Synchronization
import Testing

@testable import BeaconDaemon
@testable import BeaconRegistryClient

/// The station's health is decided on the clock the daemon hands its parts (`Daemon.clock`), not on the system's:
/// a test moves it, and a stalled engine's ten seconds take no real time. Before, `StatusCollector` read the system's
/// clocks itself, and only a daemon left to stall for real could show this.
@Suite(.timeLimit(.minutes(20))) struct StationClockTests {
    /// A station clock that moves only when the test moves it; a thread's wait on it would never end, so none may.
    final class SteppedClock: Sendable {
        private let monotonic = Atomic<Int64>(0)
        private let wall = Atomic<Int64>(1_790_000_000_000_000_000)
        var monotonicNow: Int64 { monotonic.load(ordering: .relaxed) }

        var clock: StationClock {
            StationClock(
                wallNanoseconds: { self.wall.load(ordering: .relaxed) },
                monotonicNanoseconds: { self.monotonic.load(ordering: .relaxed) },
                sleep: { _ in Issue.record("nothing here waits on the station's clock") })
        }

        func advance(nanoseconds: Int64) {
            monotonic.add(nanoseconds, ordering: .relaxed)
            wall.add(nanoseconds, ordering: .relaxed)
        }
    }

    @Test func anEngineStallAndTheUptimeAreReadOffTheStationsClock() throws {
        let directory = try TemporaryDirectory("beacond-station-clock")
        defer { directory.remove() }
        let stepped = SteppedClock()
        let engine = EngineStatus()
        let collector = StatusCollector(
            version: "test", startedAt: stepped.clock.wallMilliseconds(), startedMonotonic: stepped.monotonicNow,
            clock: stepped.clock, capture: CaptureStatus(backend: "replay", sources: []), engine: engine,
            refresher: { RegistrySyncStatus(registry: "file:bikes.json") }, delivery: { [] },
            outbox: try Outbox(path: directory.file("outbox.sqlite")), stationBeacon: nil, clocks: nil)
        let second: Int64 = 1_000_000_000

        stepped.advance(nanoseconds: 10 * second)
        #expect(collector.problems().isEmpty, "an engine that has not ticked for 10 s is not stuck yet")
        stepped.advance(nanoseconds: 1)
        #expect(collector.problems() == ["engine has not started"])

        engine.update { $0.heartbeat = stepped.monotonicNow }
        #expect(collector.problems().isEmpty, "its first tick")
        stepped.advance(nanoseconds: 11 * second)
        let report = collector.report()
        #expect(report.problems == ["engine stalled for 11 s"] && report.stuck && !report.healthy)
        #expect(abs(report.uptimeSeconds - 21.000_000_001) < 1e-6, "\(report.uptimeSeconds)")
    }
}
