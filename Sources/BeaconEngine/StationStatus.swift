public import BeaconWire

/// Whether the café's own beacon is being heard: the difference between "no bikes here" and "the radio is
/// dead".
public struct StationStatus: Hashable, Sendable {
    /// False when no station beacon is configured; capture then counts as healthy on this score.
    public var configured: Bool
    /// When it was last heard (capture time), nil if never.
    public var lastHeard: CaptureTime?
    /// Silence so far: since it was last heard, or since the engine started if never.
    public var silence: Duration
    public var healthy: Bool
}
