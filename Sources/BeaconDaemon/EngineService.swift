public import BeaconDelivery
public import BeaconEngine
public import BeaconOutbox
import BeaconPOSIX
import BeaconRegistryClient
import BeaconWire
public import Logging
public import ServiceLifecycle

/// The engine's loop: drains the ring into the ranging engine, commits every sighting to the outbox before
/// anything else happens to it, and ticks once a second to time visits out and take the rates.
///
/// A sighting the outbox cannot take (disk full, database locked) stays in memory and is retried each tick,
/// so detection goes on and nothing is lost while the process lives. On shutdown the capture has already
/// stopped (services stop in reverse order); the rest of the ring is drained and committed before returning.
public final class EngineService: Service {
    let configuration: EngineConfiguration
    let ring: AdvertRing
    let capture: any CaptureSource
    let mailbox: MissingSetMailbox
    let outbox: Outbox
    /// Wakes the poster: a sighting is in the outbox.
    let nudgePoster: @Sendable () -> Void
    let location: (latitude: Double, longitude: Double)
    let exitWhenDrained: Bool
    let onSighting: @Sendable (Sighting) -> Void
    let logger: Logger
    /// The station's clocks: the engine's monotonic time and the outbox's wall time.
    let clock: StationClock
    /// The system's clocks, to label live sightings (whose times are monotonic) with wall time; nil for a replay.
    let clocks: (@Sendable () -> ClockReading)?
    /// How often visits are timed out by the clock and the rates taken (a test makes it short).
    let tick: Duration
    /// The capture's time when the service was made, before the capture starts: the engine's clock starts there.
    /// Read when the loop begins instead, it could be a replay's time thousands of adverts in (the service group may
    /// start the capture's task first), and the early adverts would be taken at that later time: other updates,
    /// other ids (ReplayDeterminismTests).
    let startedAt: CaptureTime
    public let status = EngineStatus()

    public init(
        configuration: EngineConfiguration, location: (latitude: Double, longitude: Double), ring: AdvertRing,
        capture: any CaptureSource, mailbox: MissingSetMailbox, outbox: Outbox,
        nudgePoster: @escaping @Sendable () -> Void,
        exitWhenDrained: Bool, onSighting: @escaping @Sendable (Sighting) -> Void, logger: Logger,
        clock: StationClock = .system, clocks: (@Sendable () -> ClockReading)? = nil, tick: Duration = .seconds(1)
    ) {
        self.clock = clock
        self.clocks = clocks
        self.tick = tick
        self.configuration = configuration
        self.location = location
        self.ring = ring
        self.capture = capture
        self.mailbox = mailbox
        self.outbox = outbox
        self.nudgePoster = nudgePoster
        self.exitWhenDrained = exitWhenDrained
        self.onSighting = onSighting
        self.logger = logger
        startedAt = capture.now()
    }

    public func run() async throws {
        let loop = EngineLoop(self, monotonic: clock.monotonicNanoseconds())
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            switch loop.pass(monotonic: clock.monotonicNanoseconds) {
            case .busy: continue
            case .drained:
                logger.info("outbox drained; exiting as asked")
                return
            case .idle:
                // Look again in 100 ms. A wake-up costs more than the adverts it finds (a radio's 6,600 adverts/s at
                // most fill 660 of the ring's 4,096 slots meanwhile), and a sighting 100 ms later is no later for its
                // owner.
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
        loop.end(monotonic: clock.monotonicNanoseconds())
    }

    func publish(_ engine: borrowing RangingEngine<CaptureTime>, now: CaptureTime, monotonic: Int64) {
        let capture = capture.status.current
        let station = engine.station(now: now)
        let counters = engine.counters
        let openVisits = engine.openVisits
        let missing = engine.missing.count
        let ring = ring.statistics
        status.update {
            $0.heartbeat = monotonic
            $0.counters = counters
            $0.openVisits = openVisits
            $0.station = station
            $0.missing = missing
            $0.ring = ring
            $0.rates.add(monotonic: monotonic, adverts: capture.adverts, beacons: capture.beaconAdverts)
        }
    }
}
