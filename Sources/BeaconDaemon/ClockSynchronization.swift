import CSystemShims
#if canImport(Glibc)
import Glibc
#endif

/// Whether the system clock is synchronised (NTP, systemd-timesyncd, chrony), judged as systemd's `timedatectl`
/// judges it: the kernel's estimate of its maximum error is under 16 s. The kernel grows that estimate by
/// 500 ppm while nothing disciplines the clock and sets it to 16 s when the clock was never synchronised, so a Pi
/// that booted on fake-hwclock's time reads "not synchronised" until NTP has spoken.
public enum ClockSynchronization {
    /// The kernel's limit for the maximum error (NTP_PHASE_LIMIT), in microseconds.
    static let unsynchronisedError = 16_000_000

    public enum State: Sendable, Equatable {
        case synchronized(maximumErrorMicroseconds: Int)
        case unsynchronized
        /// adjtimex refused (seccomp) or failed: the clock's state is not known.
        case unknown(errno: Int32)
    }

    public static func read() -> State {
        var maximumError = 0
        var status: Int32 = 0
        guard CSystemShims_readClockDiscipline(&maximumError, &status) >= 0 else { return .unknown(errno: errno) }
        return maximumError < unsynchronisedError ? .synchronized(maximumErrorMicroseconds: maximumError) : .unsynchronized
    }
}
