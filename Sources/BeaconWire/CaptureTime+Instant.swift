/// Capture times are instants, so time-driven state machines can run on a capture's own clock in a replay.
extension CaptureTime: InstantProtocol {
    @inlinable
    public func advanced(by duration: Duration) -> CaptureTime {
        let nanoseconds = duration.saturatingNanoseconds
        let (sum, overflow) = nanosecondsSinceEpoch.addingReportingOverflow(nanoseconds)
        if overflow { return CaptureTime(nanosecondsSinceEpoch: nanoseconds < 0 ? .min : .max) }
        return CaptureTime(nanosecondsSinceEpoch: sum)
    }

    @inlinable
    public func duration(to other: CaptureTime) -> Duration {
        .nanoseconds(other.nanosecondsSinceEpoch.subtractingReportingOverflow(nanosecondsSinceEpoch).partialValue)
    }
}
