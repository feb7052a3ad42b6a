#if canImport(Glibc)
import Glibc
#endif

/// The system's two clocks, read in one place: monotonic for intervals, deadlines and health, wall for what is
/// stored and shown.
public enum SystemTime {
    public static func monotonicNanoseconds() -> Int64 { read(CLOCK_MONOTONIC) }

    public static func monotonicMilliseconds() -> Int64 { monotonicNanoseconds() / 1_000_000 }

    public static func wallNanoseconds() -> Int64 { read(CLOCK_REALTIME) }

    public static func wallMilliseconds() -> Int64 { wallNanoseconds() / 1_000_000 }

    /// Sleeps the calling thread for `milliseconds` (nothing when 0 or less), the rest of it again after a signal.
    public static func sleep(milliseconds: Int) { sleep(nanoseconds: Int64(milliseconds) * 1_000_000) }

    /// Sleeps the calling thread for `nanoseconds` (nothing when 0 or less), the rest of it again after a signal.
    public static func sleep(nanoseconds: Int64) {
        guard nanoseconds > 0 else { return }
        var delay = timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
        var left = timespec()
        _ = retryingOnInterrupt {
            let result = nanosleep(&delay, &left)
            delay = left  // after a signal, the next try sleeps what was left
            return result
        }
    }

    private static func read(_ clock: clockid_t) -> Int64 {
        var now = timespec()
        clock_gettime(clock, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }
}
