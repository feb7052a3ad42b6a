public import DaemonSupport

/// The poster's decisions, pure, as `RecoveryLadder` is the watchdog's: given the sink's answer to the oldest
/// sighting's delivery, what to write down in the outbox, how long to wait before the next post and what may cut that
/// wait short; and what a resume (the configuration changed) does to a hold. No clock and no I/O: `SightingPoster`
/// carries the steps out, and `PosterPolicyTests` drives this alone, in no time.
struct PosterPolicy: Sendable {
    /// What the outbox is told about the sighting just posted.
    enum Record: Hashable, Sendable {
        case delivered
        /// Kept, with the reason it was not delivered this time.
        case attempt(String)
        case dead(code: Int?, reason: String)
    }

    /// What ends the wait after a post early, besides its end.
    enum Wake: Hashable, Sendable {
        /// Only stopping: a new sighting behind a failing one must not hurry the retry.
        case stop
        /// Stopping, or a resume: only a change of configuration helps a hold.
        case resumeOrStop
    }

    /// One answer's consequences.
    struct Step: Hashable, Sendable {
        var record: Record
        /// Before the next post (zero: at once).
        var wait: Duration
        var wake: Wake
    }

    private var backoff: Backoff
    /// For a sink that holds everything up (a refused key, a redirect, a broker away): slow, since only a change of
    /// configuration or the sink's return helps, and a resume cuts it short.
    private var heldBackoff = Backoff(base: .seconds(60), cap: .seconds(1_800))
    private(set) var statistics = PosterStatistics()

    init(backoff: Backoff) { self.backoff = backoff }

    /// The sink answered `outcome` to the oldest sighting: the step, and the policy after it. The caller
    /// writes the step's record down and only then takes the policy after it, so a write that fails counts nothing
    /// (the post is made again).
    func step(for outcome: DeliveryOutcome, using random: inout some RandomNumberGenerator) -> (Step, PosterPolicy) {
        var next = self
        switch outcome {
        case .delivered:
            next.statistics.delivered += 1
            next.backoff.reset()
            next.heldBackoff.reset()
            next.statistics.lastError = nil
            next.statistics.held = nil
            return (Step(record: .delivered, wait: .zero, wake: .stop), next)
        case .retry(let retryAfter, let reason):
            next.statistics.retries += 1
            next.statistics.lastError = reason
            // Never sooner than the sink asked.
            let wait = max(next.backoff.next(using: &random), retryAfter ?? .zero)
            return (Step(record: .attempt(reason), wait: wait, wake: .stop), next)
        case .held(let reason):
            next.statistics.retries += 1
            next.statistics.lastError = reason
            next.statistics.held = reason
            let wait = next.heldBackoff.next(using: &random)
            return (Step(record: .attempt(reason), wait: wait, wake: .resumeOrStop), next)
        case .refused(let reason, let code):
            next.statistics.rejected += 1
            next.statistics.lastError = reason
            return (Step(record: .dead(code: code, reason: reason), wait: .zero, wake: .stop), next)
        }
    }
}

extension Backoff {
    /// A retryable failure's backoff: from 2 s, doubling to 8 s (each wait a random point in the upper half of its
    /// window). Capped that low so that a registry away for a while (a database failing over, a rolling restart:
    /// 503s for half a minute) has what waited within 10 s of its return; a station's retry is one small request
    /// every 4 to 8 s, and a sink that asks for longer (`Retry-After`, which the station's reader bounds at an
    /// hour) is waited for.
    public static let sightingRetries = Backoff(base: .seconds(2), cap: .seconds(8))
}
