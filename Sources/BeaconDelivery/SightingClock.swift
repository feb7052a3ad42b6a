public import BeaconOutbox

/// The system's clocks read at one moment: the wall clock, the monotonic clock, whether the wall clock is
/// synchronised (nil: it cannot be told), and which boot the monotonic clock belongs to.
public struct ClockReading: Hashable, Sendable {
    /// Nanoseconds since the epoch.
    public var wall: Int64
    /// Nanoseconds of CLOCK_MONOTONIC.
    public var monotonic: Int64
    public var synchronized: Bool?
    public var bootID: String

    public init(wall: Int64, monotonic: Int64, synchronized: Bool?, bootID: String) {
        self.wall = wall
        self.monotonic = monotonic
        self.synchronized = synchronized
        self.bootID = bootID
    }

    /// What to add to a monotonic time to have the wall time now believed.
    public var offset: Int64 { wall &- monotonic }
}

/// When a sighting heard before the system clock was synchronised may go, and with which times (pure).
///
/// A Pi has no real-time clock: it boots on fake-hwclock's last shutdown time, and NTP steps the clock forward
/// minutes later, by hours or days. A sighting's times are monotonic until they leave the Pi; one heard before the
/// step waits (`PendingTime`), and once the clock is synchronised its times are labelled with the wall clock then
/// (wall now − (monotonic now − monotonic stamp)), so they are right however far the clock moved. If the clock
/// stays unsynchronised for `limit`, the sighting goes with the best time known and `clockSynchronized: false`;
/// so it does when the Pi rebooted since (its monotonic times belong to a boot whose clock is gone).
public enum SightingClock {
    public enum Decision: Hashable, Sendable {
        /// Not yet: look again (at most this long from now).
        case wait(Duration)
        /// Label the times with this offset and send; `synchronized` says whether the offset is from a
        /// synchronised clock.
        case settle(offset: Int64, synchronized: Bool)
    }

    public static func decide(_ pending: PendingTime, reading: ClockReading, limit: Duration) -> Decision {
        guard reading.bootID == pending.bootID else { return .settle(offset: pending.offset, synchronized: false) }
        if reading.synchronized != false {
            return .settle(offset: reading.offset, synchronized: reading.synchronized == true)
        }
        let waited = Duration.nanoseconds(reading.monotonic &- pending.queuedAt)
        if waited >= limit { return .settle(offset: reading.offset, synchronized: false) }
        return .wait(limit - waited)
    }
}
