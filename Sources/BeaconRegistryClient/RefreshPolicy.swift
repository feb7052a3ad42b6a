import BeaconEngine
import DaemonSupport

/// The refresher's decisions, pure, as `PosterPolicy` is the poster's: whether a list the registry sent is taken
/// over the one in use, and how long to wait before the next refresh. No clock and no I/O: `MissingSetRefresher`
/// carries them out, and `RefreshPolicyTests` drives this alone.
struct RefreshPolicy: Sendable {
    /// What to do with a list the registry sent.
    enum Verdict: Hashable, Sendable {
        /// Taken; with a note for `status` when it was mostly unusable and taken only for want of any other.
        case take(note: String?)
        /// Not taken: most of its entries were unusable and a list is in use (the reason, for `status`).
        case refuse(String)
    }

    private let interval: Duration
    private let jitter: Double
    private var backoff: Backoff

    init(interval: Duration, jitter: Double, backoff: Backoff) {
        self.interval = interval
        self.jitter = jitter
        self.backoff = backoff
    }

    /// A list whose entries are mostly unusable (of the wrong type, say) is not one to trust over the `kept` bikes
    /// in use; with none in use, it is better than nothing.
    static func verdict(on list: MissingBikeSet.Statistics, kept: Int) -> Verdict {
        let unusable = list.rejectedTotal
        guard unusable > list.entries - unusable else { return .take(note: nil) }
        let counted = "the registry's list had \(unusable) of its \(list.entries) entries unusable"
        return kept > 0
            ? .refuse("\(counted); the previous list of \(kept) bikes is kept")
            : .take(note: "\(counted); taken, as there was no list yet")
    }

    /// The wait before the next refresh: the interval, jittered, after a success (which starts the backoff again);
    /// the next backoff after a failure.
    mutating func delay(afterSuccess succeeded: Bool, using random: inout some RandomNumberGenerator) -> Duration {
        guard succeeded else { return backoff.next(using: &random) }
        backoff.reset()
        return jittered(interval, fraction: jitter, using: &random)
    }
}
