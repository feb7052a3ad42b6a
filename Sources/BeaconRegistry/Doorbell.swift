import Synchronization

/// Wakes one waiting task; a ring with nobody waiting is kept for the next wait. Rings are coalesced, and a
/// spurious one only costs the waiter one more look at its work.
final class Doorbell: Sendable {
    private struct State {
        var rung = false
        var waiter: CheckedContinuation<Void, Never>?
    }
    private let state = Mutex(State())

    func ring() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.rung = true
            return nil
        }
        waiter?.resume()
    }

    /// Waits for a ring, or for `timeout` on `clock`, or for cancellation, whichever comes first.
    func wait<C: Clock>(timeout: Duration, clock: C) async where C.Duration == Duration {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                try? await clock.sleep(for: timeout)
                self.ring()  // also on cancellation, so the wait below cannot outlive the task
            }
            await withCheckedContinuation { continuation in
                let now = state.withLock { state -> Bool in
                    if state.rung {
                        state.rung = false
                        return true
                    }
                    state.waiter = continuation
                    return false
                }
                if now { continuation.resume() }
            }
            group.cancelAll()
        }
    }
}
