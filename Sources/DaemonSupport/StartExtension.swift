/// Tells systemd, while a long step of the start makes progress, to wait longer for `READY=1`.
///
/// A unit's `TimeoutStartSec` is right for an ordinary start, but loading the largest bike cache takes a slow CPU far
/// longer (under the VM test's emulated CPU, past the unit's 60 s): killed before it was ready, the daemon would be
/// restarted into the same load, again and again. `EXTEND_TIMEOUT_USEC` asks for more time only from now, and only
/// when the step reports progress, so a start that hangs is still stopped at the deadline it already had.
public struct StartExtension<C: Clock> where C.Duration == Duration {
    let notifier: SystemdNotifier?
    let clock: C
    /// How often, at most, systemd hears of progress.
    let every: Duration
    /// The time each message asks for, from when it is sent; longer than `every`, so progress keeps the start alive.
    let grant: Duration
    private var lastSent: C.Instant?

    public init(notifier: SystemdNotifier?, clock: C, every: Duration = .seconds(5), grant: Duration = .seconds(30)) {
        self.notifier = notifier
        self.clock = clock
        self.every = every
        self.grant = grant
    }

    /// The fields of the message due now, if one is; nil between messages.
    public mutating func due(status: String) -> [String]? {
        let now = clock.now
        if let lastSent, lastSent.duration(to: now) < every { return nil }
        lastSent = now
        let (seconds, attoseconds) = grant.components
        let micros = seconds * 1_000_000 + attoseconds / 1_000_000_000_000
        return ["EXTEND_TIMEOUT_USEC=\(micros)", "STATUS=\(status)"]
    }

    /// A step made progress: sends the message due, if one is.
    public mutating func progress(_ status: String) {
        guard let notifier, let fields = due(status: status) else { return }
        notifier.notify(fields)
    }
}
