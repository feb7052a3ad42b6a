public import BeaconWire
import LockedValue

/// A clock that moves only when tests advance it, for the registry client's refresher and poster, which sleep on a
/// clock they are given. Its instants are `CaptureTime`s (wall-clock nanoseconds), so what it reports can be
/// printed as dates. Sleepers wake when the clock is advanced past their deadline.
public final class ManualClock: Clock, Sendable {
    public typealias Instant = CaptureTime
    public typealias Duration = Swift.Duration

    private struct Sleeper {
        var deadline: CaptureTime
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now: CaptureTime
        var sleepers: [UInt64: Sleeper] = [:]
        var nextID: UInt64 = 0
    }

    private let state: LockedValue<State>

    public init(now: CaptureTime = CaptureTime(nanosecondsSinceEpoch: 0)) {
        state = LockedValue(State(now: now))
    }

    public var now: CaptureTime { state.withLock { $0.now } }

    public var minimumResolution: Duration { .nanoseconds(1) }

    /// Moves the clock forward (never back) and wakes every sleeper whose deadline has come.
    public func advance(to instant: CaptureTime) {
        let due = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            guard instant > state.now else { return [] }
            state.now = instant
            let ready = state.sleepers.filter { $0.value.deadline <= instant }
            for id in ready.keys { state.sleepers[id] = nil }
            return ready.sorted { $0.key < $1.key }.map(\.value.continuation)
        }
        for continuation in due { continuation.resume() }
    }

    public func advance(by duration: Duration) { advance(to: now.advanced(by: duration)) }

    /// Sleepers waiting now: a test waits for its sleeper to be here before it moves the clock past its deadline.
    public var sleepers: Int { state.withLock { $0.sleepers.count } }

    /// The sleepers' deadlines, soonest first: what a test reads to see how long the code under test chose to wait.
    public var deadlines: [CaptureTime] { state.withLock { $0.sleepers.values.map(\.deadline).sorted() } }

    /// How long from now the soonest sleeper sleeps, if any sleeps.
    public var soonestWait: Duration? {
        state.withLock { state in state.sleepers.values.map(\.deadline).min().map { state.now.duration(to: $0) } }
    }

    public func sleep(until deadline: CaptureTime, tolerance: Duration? = nil) async throws {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resumeNow = state.withLock { state -> Bool in
                    if deadline <= state.now || Task.isCancelled { return true }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let sleeper = state.withLock { $0.sleepers.removeValue(forKey: id) }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
        try Task.checkCancellation()
    }
}
