import BeaconEngine
public import BeaconOutbox
public import Logging
import Synchronization

/// Drains the outbox into the registry, oldest first: one request at a time, a row removed only after a 2xx,
/// retryable failures retried with backoff (never sooner than a `Retry-After`), refusals dead-lettered.
///
/// Strict order means a sighting that keeps failing holds up the ones behind it; that is the point (an owner
/// must not get "left" before "arrived"), and backoff keeps it from hammering the registry meanwhile.
public final class SightingPoster<C: Clock>: Sendable where C.Duration == Duration {
    private let outbox: Outbox
    private let registry: any Registry
    private let clock: C
    private let logger: Logger
    private let wallClock: @Sendable () -> Int64
    private let state: Mutex<State>
    private let doorbell = Doorbell()

    struct State {
        var backoff: Backoff
        var lastError: String?
        var delivered = 0
        var retries = 0
        var rejected = 0
    }

    /// `wallClock` gives milliseconds since the epoch for the delivered/dead-letter records.
    public init(
        outbox: Outbox, registry: any Registry, clock: C, backoff: Backoff = Backoff(base: .seconds(2), cap: .seconds(600)),
        logger: Logger, wallClock: @escaping @Sendable () -> Int64
    ) {
        self.outbox = outbox
        self.registry = registry
        self.clock = clock
        self.logger = logger
        self.wallClock = wallClock
        self.state = Mutex(State(backoff: backoff))
    }

    /// Tells the poster there is something new (after an enqueue); cheap, never blocks.
    public func nudge() { doorbell.ring() }

    public var statistics: PosterStatistics {
        state.withLock { PosterStatistics(delivered: $0.delivered, retries: $0.retries, rejected: $0.rejected, lastError: $0.lastError) }
    }

    /// Runs until cancelled. `idlePoll` bounds how long an empty outbox waits without a nudge.
    public func run(idlePoll: Duration = .seconds(5)) async {
        while !Task.isCancelled {
            let entry: OutboxEntry?
            do {
                entry = try outbox.oldest()
            } catch {
                logger.error("outbox unreadable; retrying", metadata: ["error": "\(error)"])
                try? await clock.sleep(for: .seconds(5))
                continue
            }
            guard let entry else {
                // Nothing to send: wait for a nudge, or look again now and then in case one was missed.
                await doorbell.wait(timeout: idlePoll, clock: clock)
                continue
            }
            let outcome = await registry.post(body: entry.body, sightingID: entry.sightingID)
            do {
                switch outcome {
                case .delivered:
                    try outbox.markDelivered(entry, now: wallClock())
                    state.withLock {
                        $0.delivered += 1
                        $0.backoff.reset()
                        $0.lastError = nil
                    }
                    logger.debug("sighting delivered", metadata: ["sighting.id": "\(entry.sightingID)", "sighting.kind": "\(entry.kind)"])
                case .retry(let reason, let retryAfter):
                    try outbox.markAttempt(entry, error: reason)
                    let delay = state.withLock { state in
                        // The generator is stateless; one per draw keeps an async function's local out of the
                        // lock's closure, an inout capture ThreadSanitizer's runtime cannot follow (it crashed).
                        var random = SystemRandomNumberGenerator()
                        state.retries += 1
                        state.lastError = reason
                        return max(state.backoff.next(using: &random), retryAfter ?? .zero)
                    }
                    logger.warning(
                        "sighting not delivered; will retry",
                        metadata: ["sighting.id": "\(entry.sightingID)", "error": "\(reason)", "retry.in": "\(delay)"])
                    try? await clock.sleep(for: delay)
                case .rejected(let status, let reason):
                    try outbox.markDead(entry, status: status, reason: reason, now: wallClock())
                    state.withLock {
                        $0.rejected += 1
                        $0.lastError = reason
                    }
                    logger.error(
                        "registry refused a sighting; moved to dead letters",
                        metadata: ["sighting.id": "\(entry.sightingID)", "registry.status": "\(status)"])
                }
            } catch {
                logger.error("outbox write failed; retrying", metadata: ["error": "\(error)"])
                try? await clock.sleep(for: .seconds(5))
            }
        }
    }
}

public struct PosterStatistics: Hashable, Sendable {
    public var delivered: Int
    public var retries: Int
    public var rejected: Int
    public var lastError: String?
}
