import Dispatch

/// What the network thread waits on between reconnection attempts: the system's clock, or a test's that moves only
/// when the test moves it, so a test reads each wait the backoff chose and ends it when it likes
/// (`MQTTReconnectTests`). Either way `stop()` ends a wait at once, through `wake`.
public struct ReconnectClock: Sendable {
    /// Blocks the network thread for `delay`, or until `wake` is signalled.
    let wait: @Sendable (_ delay: Duration, _ wake: DispatchSemaphore) -> Void

    /// The system's monotonic clock (a semaphore's timed wait).
    public static let system = ReconnectClock { delay, wake in
        _ = wake.wait(timeout: .now() + .milliseconds(Int(delay / .milliseconds(1))))
    }

    /// `clock`'s: the thread blocks until a sleep on `clock` ends, or a stop. The sleep runs as a task, which a stop
    /// cancels so that it signals nothing later.
    public static func on<C: Clock>(_ clock: C) -> ReconnectClock where C.Duration == Duration {
        ReconnectClock { delay, wake in
            let sleeper = Task {
                guard (try? await clock.sleep(for: delay)) != nil else { return }
                wake.signal()
            }
            wake.wait()
            sleeper.cancel()
        }
    }
}
