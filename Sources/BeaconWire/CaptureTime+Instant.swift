/// Capture times are instants, so time-driven state machines can run on a capture's own clock in a replay.
extension CaptureTime: InstantProtocol {
    @inlinable
    public func advanced(by duration: Duration) -> CaptureTime {
        let (seconds, attoseconds) = duration.components
        let nanoseconds = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let (sum, overflow) = nanosecondsSinceEpoch.addingReportingOverflow(nanoseconds.partialValue &+ attoseconds / 1_000_000_000)
        if nanoseconds.overflow || overflow { return CaptureTime(nanosecondsSinceEpoch: seconds < 0 ? .min : .max) }
        return CaptureTime(nanosecondsSinceEpoch: sum)
    }

    @inlinable
    public func duration(to other: CaptureTime) -> Duration {
        .nanoseconds(other.nanosecondsSinceEpoch.subtractingReportingOverflow(nanosecondsSinceEpoch).partialValue)
    }
}
