import LockedValue

/// Wakes one waiting task; a ring with nobody waiting is kept for the next wait. Rings are coalesced, and a
/// spurious one only costs the waiter one more look at its work.
///
/// Each wait has its own id, and its timeout wakes only that wait: a timeout that fires late (or is cancelled
/// once the wait is over) must not leave a ring behind, or every later wait would return at once and the
/// waiter would spin.
public final class Doorbell: Sendable {
    public init() {}

    private typealias Waiter = (id: UInt64, continuation: CheckedContinuation<Void, Never>)
    private struct State {
        var rung = false
        var waiter: Waiter?
        var lastID: UInt64 = 0
        /// The latest wait whose timeout fired before it had started waiting.
        var expired: UInt64 = 0
    }
    private let state = LockedValue(State())

    /// Whether a ring is kept for the next wait. A wait that is over must leave none it did not get from a ring
    /// (what the tests read after each wait).
    var keepsARing: Bool { state.withLock { $0.rung } }

    public func ring() {
        let waiter = state.withLock { state -> Waiter? in
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.rung = true
            return nil
        }
        waiter?.continuation.resume()
    }

    /// Waits for a ring, or for `timeout` on `clock`, or for cancellation, whichever comes first.
    public func wait<C: Clock>(timeout: Duration, clock: C) async where C.Duration == Duration {
        let id = state.withLock { state in
            state.lastID += 1
            return state.lastID
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                try? await clock.sleep(for: timeout)
                self.expire(id)  // also on cancellation, so the wait below cannot outlive the task
            }
            await withCheckedContinuation { continuation in
                let now = state.withLock { state -> Bool in
                    if state.rung || state.expired == id {
                        state.rung = false
                        return true
                    }
                    state.waiter = (id, continuation)
                    return false
                }
                if now { continuation.resume() }
            }
            group.cancelAll()
        }
    }

    /// Ends wait `id` if it is still waiting; a wait that is over is left alone.
    private func expire(_ id: UInt64) {
        let waiter = state.withLock { state -> Waiter? in
            guard let waiter = state.waiter, waiter.id == id else {
                if state.waiter == nil, state.lastID == id { state.expired = id }
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.continuation.resume()
    }
}
