/// The stall watchdog's decisions, and nothing else: no I/O, no clock of its own (times are monotonic
/// nanoseconds handed in), so every path through it is tested by feeding it times.
///
/// A scan that silently stops delivering reports is the classic failure of BLE presence systems. When the
/// liveness signal (any advert, or the station beacon when one is configured) has been silent for
/// `stallAfter`, the ladder climbs one step at a time, giving each `stepGrace` to bring adverts back:
/// re-enable the scan, power-cycle the adapter, HCIDEVDOWN/HCIDEVUP, rfkill unblock. A ladder that ends
/// without an advert rests for a backoff that doubles up to `backoffCap` before the next one, so a café that
/// is simply quiet at night costs one short ladder an hour, never a tight loop; the backoff resets only when
/// adverts come back.
public struct RecoveryLadder: Sendable {
    public enum Step: Int, CaseIterable, Sendable, CustomStringConvertible {
        case rescan, powerCycle, resetDevice, rfkillUnblock

        public var description: String {
            switch self {
            case .rescan: "re-enable the scan"
            case .powerCycle: "power-cycle the adapter (mgmt)"
            case .resetDevice: "HCIDEVDOWN/HCIDEVUP"
            case .rfkillUnblock: "rfkill unblock"
            }
        }
    }

    public struct Policy: Sendable, Equatable {
        /// Silence that counts as a stall.
        public var stallAfter: Int64
        /// How long each step has to bring adverts back before the next.
        public var stepGrace: Int64
        /// Rest after the first ladder that failed; doubles per failed ladder, up to `backoffCap`.
        public var backoffBase: Int64
        public var backoffCap: Int64

        public init(stallAfter: Int64, stepGrace: Int64, backoffBase: Int64, backoffCap: Int64) {
            self.stallAfter = stallAfter
            self.stepGrace = stepGrace
            self.backoffBase = backoffBase
            self.backoffCap = max(backoffCap, backoffBase)
        }

        /// The daemon's: each step gets up to 15 s (less when the stall time is shorter), a failed ladder
        /// rests from the stall time (at least a minute) up to an hour.
        public static func seconds(stallAfter seconds: Double) -> Policy {
            let stall = Int64(seconds * 1e9)
            return Policy(
                stallAfter: stall, stepGrace: min(stall, 15_000_000_000), backoffBase: max(stall, 60_000_000_000),
                backoffCap: 3_600_000_000_000)
        }
    }

    public enum State: Equatable, Sendable {
        /// Adverts arrive (or have not yet been silent for long).
        case watching
        /// `step` was taken at `since`.
        case climbing(step: Step, since: Int64)
        /// A ladder failed; the next may start at `until`.
        case resting(until: Int64)
    }

    /// What happened, for the log and the counters.
    public enum Event: Equatable, Sendable {
        case stalled(silentFor: Int64)
        case take(Step)
        /// Adverts came back after `step` (nil: while resting, by themselves).
        case recovered(after: Step?)
        case gaveUp(restFor: Int64)
    }

    public let policy: Policy
    public private(set) var state = State.watching
    public private(set) var backoff: Int64
    /// Steps taken, by step.
    public private(set) var taken = [Int](repeating: 0, count: Step.allCases.count)
    public private(set) var ladders = 0
    public private(set) var recoveries = 0

    public init(policy: Policy) {
        self.policy = policy
        backoff = policy.backoffBase
    }

    /// Called now and then (each poll) with the time of the last advert that counts as liveness (or the
    /// start of listening when there was none). Returns what to do and report; a `.take` must be acted on.
    public mutating func evaluate(now: Int64, lastHeard: Int64) -> [Event] {
        switch state {
        case .watching:
            let silence = now - lastHeard
            guard silence >= policy.stallAfter else { return [] }
            ladders += 1
            return [.stalled(silentFor: silence), climb(to: .rescan, at: now)]
        case .climbing(let step, let since):
            if lastHeard > since {
                return [recover(after: step)]
            }
            guard now - since >= policy.stepGrace else { return [] }
            guard let next = Step(rawValue: step.rawValue + 1) else {
                let rest = backoff
                state = .resting(until: now + rest)
                backoff = min(backoff * 2, policy.backoffCap)
                return [.gaveUp(restFor: rest)]
            }
            return [climb(to: next, at: now)]
        case .resting(let until):
            // Anything heard in the last stall period means the radio works: stop resting.
            if now - lastHeard < policy.stallAfter {
                return [recover(after: nil)]
            }
            guard now >= until else { return [] }
            ladders += 1
            return [climb(to: .rescan, at: now)]
        }
    }

    /// When `evaluate` may next have something to do, given the last liveness time: the capture waits no
    /// longer than this, so the watchdog reacts on time rather than at the next poll timeout.
    public func nextDecision(lastHeard: Int64) -> Int64 {
        switch state {
        case .watching: lastHeard + policy.stallAfter
        case .climbing(_, let since): since + policy.stepGrace
        case .resting(let until): until
        }
    }

    private mutating func climb(to step: Step, at now: Int64) -> Event {
        state = .climbing(step: step, since: now)
        taken[step.rawValue] += 1
        return .take(step)
    }

    private mutating func recover(after step: Step?) -> Event {
        state = .watching
        backoff = policy.backoffBase
        recoveries += 1
        return .recovered(after: step)
    }
}
