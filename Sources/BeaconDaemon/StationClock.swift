import BeaconCapture
import BeaconPOSIX

/// The station's time, read through the one value `Daemon` hands each of its parts: the wall clock (what leaves
/// the Pi is labelled with it), the monotonic clock (visits, stalls, uptime, a replay's pace), and a thread's wait.
/// The system's by default. A test's moves only when the test moves it, so a stall or an uptime is decided when
/// the test says and not after real seconds.
public struct StationClock: Sendable {
    /// Nanoseconds since the Unix epoch: the clock NTP sets, and steps.
    public var wallNanoseconds: @Sendable () -> Int64
    /// Nanoseconds on a clock that never steps back.
    public var monotonicNanoseconds: @Sendable () -> Int64
    /// Blocks the calling thread (a capture or replay loop) for about this long.
    public var sleep: @Sendable (_ nanoseconds: Int64) -> Void

    public init(
        wallNanoseconds: @escaping @Sendable () -> Int64, monotonicNanoseconds: @escaping @Sendable () -> Int64,
        sleep: @escaping @Sendable (_ nanoseconds: Int64) -> Void
    ) {
        self.wallNanoseconds = wallNanoseconds
        self.monotonicNanoseconds = monotonicNanoseconds
        self.sleep = sleep
    }

    public static let system = StationClock(
        wallNanoseconds: { SystemTime.wallNanoseconds() }, monotonicNanoseconds: { SystemTime.monotonicNanoseconds() },
        sleep: { SystemTime.sleep(nanoseconds: $0) })

    public func wallMilliseconds() -> Int64 { wallNanoseconds() / 1_000_000 }

    /// The live capture's share: its rounds, its watchdog and its pause while adverts gather.
    var capture: CaptureClock {
        let sleep = sleep
        return CaptureClock(monotonicNanoseconds: monotonicNanoseconds, pause: { sleep(Int64($0) * 1_000_000) })
    }
}
