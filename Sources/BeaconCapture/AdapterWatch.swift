import BeaconPOSIX

#if canImport(Glibc)
import Glibc
#endif

/// One configured adapter as both live backends keep it (`HCICapture`, `BlueZCapture`): its stall watchdog and the
/// evidence the watchdog judges (when the adapter was last heard), and, while it is away, when to try it again. The
/// backend knows how to recover and how to take the adapter up again; this decides when, the same for both.
final class AdapterWatch {
    let name: String
    private let policy: RecoveryLadder.Policy?
    private let retryNanoseconds: Int64
    private(set) var ladder: RecoveryLadder?
    /// Monotonic time the adapter was last heard (an advert, or the station beacon).
    var lastHeard: Int64
    /// While away: when to try again.
    private var nextRetry: Int64 = 0

    init(name: String, settings: CaptureSettings, now: Int64) {
        self.name = name
        policy = settings.recovery
        retryNanoseconds = settings.reopenMilliseconds * 1_000_000
        ladder = policy.map(RecoveryLadder.init(policy:))
        lastHeard = now
    }

    /// It went away at `now`: tried again a reopen interval later, or at the next round when `soon` (it is known
    /// to be back, or its service just restarted).
    func away(now: Int64, soon: Bool = false) { nextRetry = soon ? 0 : now + retryNanoseconds }

    /// Scanning again from `now` (started, or taken up again): heard now, the watchdog from its first rung.
    func restarted(now: Int64) {
        ladder = policy.map(RecoveryLadder.init(policy:))
        lastHeard = now
    }

    /// One round's upkeep. Present (`recovery` given): the watchdog's decision and its steps. Away and due: one
    /// attempt to take it up again (`takeUp` answers how it scans now, nil while it is still away), reported when
    /// it is back. Returns whether it came back.
    func maintain(
        now: Int64, recovery: AdapterRecovery?, takeUp: () -> String?, report: (AdapterReport) -> Void
    ) -> Bool {
        if let recovery {
            recovery.watch(&ladder, now: now, lastHeard: lastHeard, adapter: name, report: report)
            return false
        }
        guard now >= nextRetry else { return false }
        nextRetry = now + retryNanoseconds
        guard let method = takeUp() else { return false }
        restarted(now: now)
        report(AdapterReport(adapter: name, event: .back(method)))
        return true
    }

    /// Waits in poll(2) on `pollers` for up to `timeoutMilliseconds`, cut short so the soonest decision of any
    /// present adapter's watchdog is taken on time (it being `now` on the capture's clock). Returns how many
    /// descriptors are ready (0 on EINTR).
    static func poll(
        _ pollers: inout [pollfd], timeoutMilliseconds: Int32, now: Int64,
        watching present: some Sequence<AdapterWatch>
    )
        throws(HCIError) -> Int32
    {
        let wait = Self.wait(timeoutMilliseconds, now: now, until: nextDecision(of: present))
        let ready = interruptIsNothing {
            pollers.withUnsafeMutableBufferPointer { Glibc.poll($0.baseAddress, nfds_t($0.count), wait) }
        }
        if ready < 0 { throw HCISocket.failure(errno, "wait for", name: "the adapters") }
        return ready
    }

    /// The poll timeout, cut short so a watchdog decision due sooner is taken on time (to the millisecond,
    /// rounded up so the decision is due when poll returns).
    static func wait(_ timeoutMilliseconds: Int32, now: Int64, until deadline: Int64?) -> Int32 {
        guard let deadline else { return timeoutMilliseconds }
        let left = (deadline - now + 999_999) / 1_000_000
        return Int32(max(0, min(Int64(timeoutMilliseconds), left)))
    }

    /// The soonest decision of any watchdog (without building an array: this runs once per poll).
    static func nextDecision(of watches: some Sequence<AdapterWatch>) -> Int64? {
        var soonest: Int64?
        for watch in watches {
            guard let next = watch.ladder?.nextDecision(lastHeard: watch.lastHeard) else { continue }
            if soonest.map({ next < $0 }) ?? true { soonest = next }
        }
        return soonest
    }
}
