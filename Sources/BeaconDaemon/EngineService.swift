public import BeaconEngine
public import BeaconOutbox
import BeaconPOSIX
public import BeaconRegistryClient
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
    private let configuration: EngineConfiguration
    private let ring: AdvertRing
    private let capture: any CaptureSource
    private let mailbox: MissingSetMailbox
    private let outbox: Outbox
    private let poster: @Sendable () -> Void
    private let location: (latitude: Double, longitude: Double)
    private let exitWhenDrained: Bool
    private let onSighting: @Sendable (Sighting) -> Void
    private let logger: Logger
    /// The system's clocks, to label live sightings (whose times are monotonic) with wall time; nil for a replay.
    private let clocks: (@Sendable () -> ClockReading)?
    /// How often visits are timed out by the clock and the rates taken (a test makes it short).
    private let tick: Duration
    public let monitor = EngineMonitor()

    public init(
        configuration: EngineConfiguration, location: (latitude: Double, longitude: Double), ring: AdvertRing,
        capture: any CaptureSource, mailbox: MissingSetMailbox, outbox: Outbox,
        nudgePoster: @escaping @Sendable () -> Void,
        exitWhenDrained: Bool, onSighting: @escaping @Sendable (Sighting) -> Void, logger: Logger,
        clocks: (@Sendable () -> ClockReading)? = nil, tick: Duration = .seconds(1)
    ) {
        self.clocks = clocks
        self.tick = tick
        self.configuration = configuration
        self.location = location
        self.ring = ring
        self.capture = capture
        self.mailbox = mailbox
        self.outbox = outbox
        self.poster = nudgePoster
        self.exitWhenDrained = exitWhenDrained
        self.onSighting = onSighting
        self.logger = logger
    }

    public func run() async throws {
        var consumer = ring.makeConsumer()
        var engine = RangingEngine<CaptureTime>(
            configuration: configuration, missing: mailbox.latest, startingAt: capture.now())
        var generation: UInt64 = 0
        var now = capture.now()
        var sightings: [Sighting] = []
        sightings.reserveCapacity(64)
        var pending: [OutboxItem] = []
        var lastTick = SystemTime.monotonicNanoseconds()
        let tickNanoseconds = tick.saturatingNanoseconds
        var finished = false

        func take(_ sightings: inout [Sighting]) {
            // A replay's times are wall times already. Live ones are monotonic: labelled with the wall clock now if it
            // is synchronised (or cannot be told), else queued with their monotonic times to be labelled when it is.
            let reading = capture.timeBase == .monotonic ? clocks?() : nil
            for sighting in sightings {
                let waiting = reading.flatMap { reading in
                    reading.synchronized == false
                        ? PendingTime(
                            firstSeen: sighting.firstSeen.nanosecondsSinceEpoch,
                            lastSeen: sighting.lastSeen.nanosecondsSinceEpoch,
                            queuedAt: reading.monotonic, bootID: reading.bootID, offset: reading.offset) : nil
                }
                pending.append(
                    SightingPayload.outboxItem(
                        sighting, stationID: configuration.stationID, latitude: location.latitude,
                        longitude: location.longitude,
                        offset: reading?.offset ?? 0, pending: waiting))
                logger.notice(
                    "sighting",
                    metadata: [
                        "sighting.kind": "\(sighting.kind.rawValue)", "bike.id": "\(sighting.bikeID)",
                        "beacon.minor": "\(sighting.beacon.minor)",
                        "sighting.rssi": "\(sighting.rssi.map { "\(Int($0.rounded()))" } ?? "none")",
                        "sighting.proximity": "\(sighting.proximity.rawValue)",
                    ])
                onSighting(sighting)
            }
            sightings.removeAll(keepingCapacity: true)
            commit()
        }
        func commit() {
            guard !pending.isEmpty else { return }
            do {
                try outbox.enqueue(pending, now: SystemTime.wallMilliseconds())
                pending.removeAll(keepingCapacity: true)
                monitor.update { $0.commitError = nil }
                poster()
            } catch {
                let count = pending.count
                monitor.update {
                    if $0.commitError == nil {
                        self.logger.error(
                            "outbox cannot take sightings; keeping them in memory", metadata: ["error": "\(error)"])
                    }
                    $0.commitError = "\(error)"
                    $0.uncommitted = count
                }
            }
            monitor.update { $0.uncommitted = pending.count }
        }
        func drain() {
            _ = consumer.drain(limit: 4_096) { advert in
                now = max(now, advert.time)
                engine.observe(advert, at: now, into: &sightings)
            }
            if !sightings.isEmpty { take(&sightings) }
        }

        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            if let (set, newGeneration) = mailbox.poll(since: generation) {
                engine.replaceMissingSet(set)
                generation = newGeneration
            }
            // Read before the drain: every advert the capture had by this time is in the ring by then.
            let captureNow = capture.now()
            let before = ring.statistics.consumed
            drain()
            let busy = ring.statistics.consumed != before
            let monotonic = SystemTime.monotonicNanoseconds()
            if monotonic - lastTick >= tickNanoseconds {
                lastTick = monotonic
                // Silence is evidence that a beacon left only while capture is listening: once it has
                // stopped (shutdown) or failed, visits are left open rather than closed by the clock. And only up
                // to what the engine has read: with adverts still in the ring, the capture's time is ahead of them
                // (a replay's by minutes of capture), and visits whose next adverts wait there would be closed,
                // or their reports moved, depending on how far the engine had got (a replay's ids would differ
                // from run to run). The adverts' own times move the engine on meanwhile.
                if !capture.monitor.ended && ring.statistics.depth == 0 {
                    now = max(now, captureNow)
                    engine.expire(now: now, into: &sightings)
                    if !sightings.isEmpty { take(&sightings) }
                }
                commit()
                publish(engine, now: now, monotonic: monotonic)
            }
            if !finished && capture.monitor.current.state == .finished && ring.statistics.depth == 0 {
                // The replay is over: close the visits still open at their last-seen time, as `replay` does.
                drain()
                engine.finish(into: &sightings)
                if !sightings.isEmpty { take(&sightings) }
                finished = true
                publish(engine, now: now, monotonic: monotonic)
                logger.info(
                    "capture ended; every advert processed",
                    metadata: ["capture.state": "\(capture.monitor.current.state.rawValue)"])
            }
            if finished && exitWhenDrained && pending.isEmpty, (try? outbox.statistics().depth) == 0 {
                logger.info("outbox drained; exiting as asked")
                return
            }
            // Idle: look again in 100 ms. A wake-up costs more than the adverts it finds (a radio's 6,600
            // adverts/s at most fill 660 of the ring's 4,096 slots meanwhile), and a sighting 100 ms later is
            // no later for its owner.
            if !busy { try? await Task.sleep(for: .milliseconds(100)) }
        }
        // Capture has stopped: take what is left in the ring, commit it, and leave open visits open (the bike
        // did not leave; the daemon stopped).
        while ring.statistics.depth > 0 { drain() }
        commit()
        publish(engine, now: now, monotonic: SystemTime.monotonicNanoseconds())
        if !pending.isEmpty {
            logger.critical(
                "stopping with sightings the outbox could not take", metadata: ["sightings.lost": "\(pending.count)"])
        }
    }

    private func publish(_ engine: borrowing RangingEngine<CaptureTime>, now: CaptureTime, monotonic: Int64) {
        let capture = capture.monitor.current
        let station = engine.station(now: now)
        let counters = engine.counters
        let openVisits = engine.openVisits
        let missing = engine.missing.count
        let ring = ring.statistics
        monitor.update {
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
