import BeaconEngine
public import BeaconOutbox
public import DaemonSupport
import LockedValue
public import Logging

/// Drains one sink's line of the outbox into it (the registry, an MQTT broker), oldest first: one attempt at a time,
/// a sighting no longer owed to the sink only once it took it (a 2xx, a PUBACK), retryable failures retried with
/// backoff (never sooner than a `Retry-After`), refusals dead-lettered. Each sink has a poster of its own, so one
/// that is away holds up no other.
///
/// Strict order means a sighting that keeps failing holds up the ones behind it; that is the point (an owner
/// must not get "left" before "arrived"), and backoff keeps it from hammering the registry meanwhile.
public final class SightingPoster<C: Clock>: Sendable where C.Duration == Duration {
    private let outbox: Outbox
    private let destination: any SightingSink
    /// The sink it delivers to, and so its line of the outbox (the outbox keeps each sink's line apart).
    public let sink: SinkID
    private let clock: C
    private let logger: Logger
    private let wallClock: @Sendable () -> Int64
    private let state: LockedValue<State>
    private let doorbell = Doorbell()

    struct State {
        var policy: PosterPolicy
        /// The oldest sighting waits for the system clock to be synchronised.
        var waitingForClock = false
        /// How often the oldest sighting was found still waiting for the clock.
        var clockChecks = 0
        /// `stop()` was called: no new post starts.
        var stopping = false
        /// How many resumes have come: a hold's wait ends on one that came after its post began, even while the post
        /// was under way (the broker came back as the poster heard it was away).
        var resumes = 0
    }

    /// Reads the system's clocks, for sightings queued before the clock was synchronised (`SightingClock`);
    /// nil where nothing is ever queued that way (replays, tests).
    private let systemClocks: (@Sendable () -> ClockReading)?
    /// How long such a sighting waits for the clock before it goes anyway, marked `clockSynchronized: false`.
    private let clockWait: Duration

    /// `wallClock` gives milliseconds since the epoch for the delivered/dead-letter records.
    public init(
        outbox: Outbox, sink destination: any SightingSink, clock: C,
        backoff: Backoff = Backoff.sightingRetries,
        logger: Logger, wallClock: @escaping @Sendable () -> Int64, systemClocks: (@Sendable () -> ClockReading)? = nil,
        clockWait: Duration = .seconds(600)
    ) {
        self.destination = destination
        self.sink = destination.id
        self.systemClocks = systemClocks
        self.clockWait = clockWait
        self.outbox = outbox
        self.clock = clock
        self.logger = logger
        self.wallClock = wallClock
        self.state = LockedValue(State(policy: PosterPolicy(backoff: backoff)))
    }

    /// Tells the poster there is something new (after an enqueue); cheap, never blocks.
    public func nudge() { doorbell.ring() }

    /// Ends `run` once the post under way, if any, has its answer and that answer is written down: cancelling it
    /// instead would drop an answer the registry already gave, and the next start would post the sighting again.
    /// (A post takes at most its deadline, 20 s; the unit gives a stop 30.)
    public func stop() {
        state.withLock { $0.stopping = true }
        doorbell.ring()
    }

    private var stopping: Bool { state.withLock { $0.stopping } }

    /// The sink's configuration changed (SIGHUP), or the sink is back: held sightings are tried again at once.
    public func resume() {
        state.withLock {
            $0.resumes += 1
        }
        doorbell.ring()
    }

    public var statistics: PosterStatistics {
        state.withLock {
            var statistics = $0.policy.statistics
            statistics.waitingForClock = $0.waitingForClock
            statistics.clockChecks = $0.clockChecks
            return statistics
        }
    }

    /// Runs until cancelled. `idlePoll` bounds how long an empty outbox waits without a nudge.
    public func run(idlePoll: Duration = .seconds(5)) async {
        while !Task.isCancelled, !stopping {
            let entry: OutboxEntry?
            do {
                entry = try outbox.oldest(for: sink.name)
            } catch {
                logger.error("outbox unreadable; retrying", metadata: ["error": "\(error)"])
                try? await clock.sleep(for: .seconds(5))
                continue
            }
            guard let entry else {
                // Nothing to send: wait for a nudge, or look again now and then in case one was missed.
                state.withLock { $0.waitingForClock = false }
                await doorbell.wait(timeout: idlePoll, clock: clock)
                continue
            }
            let resumesBefore = state.withLock { $0.resumes }
            guard let outcome = await attempt(entry) else { continue }
            let (step, next) = state.withLock { state in
                // The generator is stateless; one per draw keeps an async function's local out of the lock's
                // closure, an inout capture ThreadSanitizer's runtime cannot follow (it crashed).
                var random = SystemRandomNumberGenerator()
                return state.policy.step(for: outcome, using: &random)
            }
            guard record(step.record, entry) else {
                try? await clock.sleep(for: .seconds(5))
                continue
            }
            state.withLock { $0.policy = next }
            log(outcome, step, entry)
            switch step.wake {
            case .stop: await sleepUnlessStopped(step.wait)
            case .resumeOrStop: await waitWhileHeld(step.wait, resumesBefore: resumesBefore)
            }
        }
    }

    /// One attempt at the oldest sighting: the sink's answer, a refusal of a row that is not a sighting, or nil
    /// when its times must wait for the clock (the caller looks at the queue again).
    private func attempt(_ entry: OutboxEntry) async -> DeliveryOutcome? {
        guard var sighting = OutgoingSighting(stored: entry.body) else {
            return .refused(reason: "the queued row is not a sighting beacond can read", code: nil)
        }
        if let pending = entry.pendingTime {
            guard let settled = await settle(sighting, entry, pending) else { return nil }
            sighting = settled
        }
        return await destination.deliver(sighting)
    }

    /// Writes the step's record down; false when the outbox could not be written (the attempt is made again, after
    /// a pause, and counts nothing).
    private func record(_ record: PosterPolicy.Record, _ entry: OutboxEntry) -> Bool {
        do {
            switch record {
            case .delivered: try outbox.markDelivered(entry, sink: sink.name, now: wallClock())
            case .attempt(let reason): try outbox.markAttempt(entry, sink: sink.name, error: reason)
            case .dead(let code, let reason):
                try outbox.markDead(entry, sink: sink.name, status: code, reason: reason, now: wallClock())
            }
            return true
        } catch {
            logger.error("outbox write failed; retrying", metadata: ["error": "\(error)"])
            return false
        }
    }

    private func log(_ outcome: DeliveryOutcome, _ step: PosterPolicy.Step, _ entry: OutboxEntry) {
        switch outcome {
        case .delivered:
            logger.debug(
                "sighting delivered",
                metadata: ["sink": "\(sink)", "sighting.id": "\(entry.sightingID)", "sighting.kind": "\(entry.kind)"])
        case .retry(_, let reason):
            logger.warning(
                "sighting not delivered; will retry",
                metadata: [
                    "sink": "\(sink)", "sighting.id": "\(entry.sightingID)", "error": "\(reason)",
                    "retry.in": "\(step.wait)",
                ])
        case .held(let reason) where sink == .registry:
            logger.error(
                "sightings held: the registry cannot take any until the station's configuration changes",
                metadata: ["error": "\(reason)", "retry.in": "\(step.wait)"])
        case .held(let reason):
            // Its own client says why, once (a wrong password, the broker away): this is every attempt.
            logger.debug(
                "sightings held: the \(sink) sink cannot take any until it is back",
                metadata: ["sink": "\(sink)", "error": "\(reason)", "retry.in": "\(step.wait)"])
        case .refused(let reason, _):
            logger.error(
                "\(sink) refused a sighting; moved to dead letters",
                metadata: ["sink": "\(sink)", "sighting.id": "\(entry.sightingID)", "error": "\(reason)"])
        }
    }

    /// The times of a sighting queued before the clock was synchronised: settled and stored when they can be, nil
    /// after waiting a little (the caller looks at the queue again).
    private func settle(
        _ sighting: OutgoingSighting, _ entry: OutboxEntry, _ pending: PendingTime
    ) async -> OutgoingSighting? {
        guard let reading = systemClocks?() else {
            // No clock to settle with: the provisional times are the best there are.
            return sighting.settled(pending, offset: pending.offset, synchronized: false)
        }
        switch SightingClock.decide(pending, reading: reading, limit: clockWait) {
        case .wait(let left):
            let first = state.withLock { state in
                defer { (state.waitingForClock, state.clockChecks) = (true, state.clockChecks + 1) }
                return !state.waitingForClock
            }
            if first {
                logger.warning(
                    "the system clock is not synchronised: sightings wait for it before they are sent",
                    metadata: ["clock.wait": "\(clockWait)"])
            }
            await doorbell.wait(timeout: min(left, .seconds(1)), clock: clock)
            return nil
        case .settle(let offset, let synchronized):
            state.withLock { $0.waitingForClock = false }
            let settled = sighting.settled(pending, offset: offset, synchronized: synchronized)
            do {
                try outbox.settleTime(entry, body: settled.json)
            } catch {
                logger.error("outbox write failed; retrying", metadata: ["error": "\(error)"])
                try? await clock.sleep(for: .seconds(5))
                return nil
            }
            if !synchronized {
                logger.warning(
                    "a sighting goes with times from an unsynchronised clock (clockSynchronized: false)",
                    metadata: ["sighting.id": "\(entry.sightingID)"])
            }
            return settled
        }
    }

    /// Waits out a hold: until `delay` has passed or a `resume()` since the post began says the configuration
    /// changed or the sink is back (new sightings ring the same doorbell; they do not end the wait).
    private func waitWhileHeld(_ delay: Duration, resumesBefore: Int) async {
        let deadline = clock.now.advanced(by: delay)
        while !Task.isCancelled, !stopping, clock.now < deadline {
            if state.withLock({ $0.resumes != resumesBefore }) { return }
            await doorbell.wait(timeout: clock.now.duration(to: deadline), clock: clock)
        }
    }

    /// A backoff: `delay`, cut short only by `stop()` (a new sighting rings the same doorbell and does not end it).
    private func sleepUnlessStopped(_ delay: Duration) async {
        let deadline = clock.now.advanced(by: delay)
        while !Task.isCancelled, !stopping, clock.now < deadline {
            await doorbell.wait(timeout: clock.now.duration(to: deadline), clock: clock)
        }
    }
}

public struct PosterStatistics: Hashable, Sendable {
    public var delivered = 0
    public var retries = 0
    public var rejected = 0
    public var lastError: String?
    /// Why every sighting is held (the registry refuses the key, moved, or is not at the URL; the broker is away),
    /// while it is.
    public var held: String?
    /// The oldest sighting waits for the system clock to be synchronised.
    public var waitingForClock = false
    /// How often it was found still waiting (about once a second while it does): a sign the poster looked again
    /// and held it back again.
    public var clockChecks = 0

    public init() {}
}
