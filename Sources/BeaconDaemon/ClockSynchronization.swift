import BeaconPOSIX

#if canImport(Glibc)
import Glibc
#endif

/// Whether the system clock is synchronised (NTP, systemd-timesyncd, chrony), judged as systemd's `timedatectl`
/// judges it: the kernel's estimate of its maximum error is under 16 s. The kernel grows that estimate by
/// 500 ppm while nothing disciplines the clock and sets it to 16 s when the clock was never synchronised, so a Pi
/// that booted on fake-hwclock's time reads "not synchronised" until NTP has spoken.
///
/// Inside the shipped unit `adjtimex` is refused (ProtectClock= denies the @clock calls, reading ones included);
/// there the answer is systemd-timesyncd's: `/run/systemd/timesync/synchronized` exists once it has synchronised
/// the clock, and its directory while it runs. With neither, the state is not known.
public enum ClockSynchronization {
    /// The kernel's limit for the maximum error (NTP_PHASE_LIMIT), in microseconds.
    static let unsynchronisedError = 16_000_000

    public enum State: Sendable, Equatable {
        /// The kernel's maximum-error estimate, when it could be read (nil: timesyncd's word).
        case synchronized(maximumErrorMicroseconds: Int?)
        case unsynchronized
        /// adjtimex refused (seccomp) or failed, and no systemd-timesyncd to ask: the clock's state is not known.
        case unknown(errno: Int32)

        /// true, false, or nil when it cannot be told.
        public var isSynchronized: Bool? {
            switch self {
            case .synchronized: true
            case .unsynchronized: false
            case .unknown: nil
            }
        }
    }

    public static func read(timesync: String = "/run/systemd/timesync") -> State {
        guard let (maximumError, _) = SystemExtras.clockDiscipline() else {
            let refused = errno
            if access(timesync + "/synchronized", F_OK) == 0 { return .synchronized(maximumErrorMicroseconds: nil) }
            if access(timesync, F_OK) == 0 { return .unsynchronized }
            return .unknown(errno: refused)
        }
        return maximumError < unsynchronisedError
            ? .synchronized(maximumErrorMicroseconds: maximumError) : .unsynchronized
    }
}
