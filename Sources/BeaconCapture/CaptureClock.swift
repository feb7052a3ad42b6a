import BeaconPOSIX

/// The live capture's time: the monotonic clock its rounds, watchdog and retries read, and its pause while adverts
/// gather. The system's by default. A test's clock stands still until the test moves it, so the watchdog decides
/// when the test says and not after real seconds (`StallRecoveryTests`).
///
/// The waits for a controller's or mgmt's answer (`HCISocket`, `MgmtSocket`) stay on the system clock: they bound
/// a system call, not a decision.
public struct CaptureClock: Sendable {
    /// Nanoseconds on a clock that never steps back.
    public var monotonicNanoseconds: @Sendable () -> Int64
    /// Lets adverts gather before a round reads them (`CaptureSettings.gatherMilliseconds`).
    public var pause: @Sendable (_ milliseconds: Int) -> Void

    public init(
        monotonicNanoseconds: @escaping @Sendable () -> Int64, pause: @escaping @Sendable (_ milliseconds: Int) -> Void
    ) {
        self.monotonicNanoseconds = monotonicNanoseconds
        self.pause = pause
    }

    public static let system = CaptureClock(
        monotonicNanoseconds: { SystemTime.monotonicNanoseconds() },
        pause: { SystemTime.sleep(milliseconds: $0) })
}
