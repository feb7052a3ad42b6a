import BeaconDelivery
import BeaconEngine
import BeaconOutbox
import BeaconPOSIX
import BeaconRegistryClient
import BeaconWire
import Logging

/// One pass of the engine's loop, and what it carries from pass to pass: the engine, the ring's consumer, the
/// sightings the outbox has not taken yet. `EngineService.run` repeats passes and waits between idle ones;
/// `EngineLoopTests` drives them one at a time, on the monotonic times it chooses. Used by one task only.
final class EngineLoop {
    /// What a pass found.
    enum Pass: Equatable {
        /// Adverts were read: pass again at once.
        case busy
        /// Nothing was waiting: wait a little before the next pass.
        case idle
        /// The replay is over and every sighting has left the outbox, with `exitWhenDrained`: stop.
        case drained
    }

    private let service: EngineService
    private var consumer: AdvertRing.Consumer
    private var engine: RangingEngine<CaptureTime>
    private var generation: UInt64 = 0
    private var now: CaptureTime
    private var sightings: [Sighting] = []
    /// Sightings made but not yet committed (the outbox refused them: a full disk); retried every tick.
    private(set) var pending: [OutboxItem] = []
    private var lastTick: Int64
    private let tickNanoseconds: Int64
    private(set) var finished = false

    init(_ service: EngineService, monotonic: Int64) {
        self.service = service
        consumer = service.ring.makeConsumer()
        engine = RangingEngine<CaptureTime>(
            configuration: service.configuration, missing: service.mailbox.latest, startingAt: service.startedAt)
        now = service.startedAt
        sightings.reserveCapacity(64)
        lastTick = monotonic
        tickNanoseconds = service.tick.saturatingNanoseconds
    }

    /// Takes a new missing set if one came, drains the ring, and once a tick has passed (by `monotonic`, read after
    /// the drain) times visits out, retries what the outbox refused and publishes the status; closes the visits left
    /// open once a replay has finished.
    func pass(monotonic: () -> Int64) -> Pass {
        let capture = service.capture
        let ring = service.ring
        if let (set, newGeneration) = service.mailbox.poll(since: generation) {
            engine.replaceMissingSet(set)
            generation = newGeneration
        }
        // Read before the drain: every advert the capture had by this time is in the ring by then.
        let captureNow = capture.now()
        let before = ring.statistics.consumed
        drain()
        let busy = ring.statistics.consumed != before
        let monotonic = monotonic()
        if monotonic - lastTick >= tickNanoseconds {
            lastTick = monotonic
            // Silence is evidence that a beacon left only while capture is listening: once it has
            // stopped (shutdown) or failed, visits are left open rather than closed by the clock. And only up
            // to what the engine has read: with adverts still in the ring, the capture's time is ahead of them
            // (a replay's by minutes of capture), and visits whose next adverts wait there would be closed,
            // or their reports moved, depending on how far the engine had got (a replay's ids would differ
            // from run to run). The adverts' own times move the engine on meanwhile.
            if capture.timePassesBetweenAdverts && !capture.status.ended && ring.statistics.depth == 0 {
                now = max(now, captureNow)
                engine.expire(now: now, into: &sightings)
                take()
            }
            commit()
            service.publish(engine, now: now, monotonic: monotonic)
        }
        if !finished && capture.status.current.state == .finished && ring.statistics.depth == 0 {
            // The replay is over: close the visits still open at their last-seen time, as `replay` does.
            drain()
            engine.finish(into: &sightings)
            take()
            finished = true
            service.publish(engine, now: now, monotonic: monotonic)
            service.logger.info(
                "capture ended; every advert processed",
                metadata: ["capture.state": "\(capture.status.current.state.rawValue)"])
        }
        if finished && service.exitWhenDrained && pending.isEmpty, (try? service.outbox.statistics().depth) == 0 {
            return .drained
        }
        return busy ? .busy : .idle
    }

    /// Capture has stopped: takes what is left in the ring, commits it, and leaves open visits open (the bike did not
    /// leave; the daemon stopped).
    func end(monotonic: Int64) {
        while service.ring.statistics.depth > 0 { drain() }
        commit()
        service.publish(engine, now: now, monotonic: monotonic)
        if !pending.isEmpty {
            service.logger.critical(
                "stopping with sightings the outbox could not take", metadata: ["sightings.lost": "\(pending.count)"])
        }
    }

    private func drain() {
        _ = consumer.drain(limit: 4_096) { advert in
            now = max(now, advert.time)
            engine.observe(advert, at: now, into: &sightings)
        }
        take()
    }

    /// Labels the new sightings for the outbox and commits them.
    private func take() {
        guard !sightings.isEmpty else { return }
        // A replay's times are wall times already. Live ones are monotonic: labelled with the wall clock now if it
        // is synchronised (or cannot be told), else queued with their monotonic times to be labelled when it is.
        let reading = service.capture.timeBase == .monotonic ? service.clocks?() : nil
        let configuration = service.configuration
        for sighting in sightings {
            let waiting = reading.flatMap { reading in
                reading.synchronized == false
                    ? PendingTime(
                        firstSeen: sighting.firstSeen.nanosecondsSinceEpoch,
                        lastSeen: sighting.lastSeen.nanosecondsSinceEpoch,
                        queuedAt: reading.monotonic, bootID: reading.bootID, offset: reading.offset) : nil
            }
            pending.append(
                OutgoingSighting.outboxItem(
                    sighting, stationID: configuration.stationID, latitude: service.location.latitude,
                    longitude: service.location.longitude, offset: reading?.offset ?? 0, pending: waiting))
            service.logger.notice(
                "sighting",
                metadata: [
                    "sighting.kind": "\(sighting.kind.rawValue)", "bike.id": "\(sighting.bikeID)",
                    "beacon.minor": "\(sighting.beacon.minor)",
                    "sighting.rssi": "\(sighting.rssi.map { "\(Int($0.rounded()))" } ?? "none")",
                    "sighting.proximity": "\(sighting.proximity.rawValue)",
                ])
            service.onSighting(sighting)
        }
        sightings.removeAll(keepingCapacity: true)
        commit()
    }

    private func commit() {
        guard !pending.isEmpty else { return }
        let status = service.status
        let logger = service.logger
        do {
            try service.outbox.enqueue(pending, now: service.clock.wallMilliseconds())
            pending.removeAll(keepingCapacity: true)
            status.update { $0.commitError = nil }
            service.nudgePoster()
        } catch {
            let count = pending.count
            status.update {
                if $0.commitError == nil {
                    logger.error(
                        "outbox cannot take sightings; keeping them in memory", metadata: ["error": "\(error)"])
                }
                $0.commitError = "\(error)"
                $0.uncommitted = count
            }
        }
        status.update { [count = pending.count] in $0.uncommitted = count }
    }
}
