extension Duration {
    /// Whole nanoseconds, saturating at Int64's ends: the one conversion every module uses, so that a configured
    /// timeout of centuries is a very long timeout everywhere, never a wrapped negative one or a trap.
    @inlinable
    public var saturatingNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (product, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        let (sum, overflowed) = product.addingReportingOverflow(attoseconds / 1_000_000_000)
        return overflowed ? (seconds < 0 ? .min : .max) : sum
    }
}
