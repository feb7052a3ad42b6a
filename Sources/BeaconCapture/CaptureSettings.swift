/// How a live backend scans and watches its adapters (`HCICapture`, `BlueZCapture`).
public struct CaptureSettings: Sendable {
    public var intervalMilliseconds: Double
    public var windowMilliseconds: Double
    /// The stall watchdog, or none (`beacond record`).
    public var recovery: RecoveryLadder.Policy?
    /// Whether any advertising report counts as liveness, or only what the owner passes to `heard`
    /// (the station beacon).
    public var livenessFromAnyAdvert = true
    /// How often an adapter that went away is tried again.
    public var reopenMilliseconds: Int64 = 2_000
    /// How long adverts may gather after the first one wakes the capture thread, before it reads them all at
    /// once (0: read at once). Adverts come spread out, so reading each as it comes woke the thread for nearly
    /// every one; no decision of the engine needs them sooner than this.
    public var gatherMilliseconds = 0
    /// The capture's clock: the system's, or a test's.
    public var clock = CaptureClock.system

    public init(intervalMilliseconds: Double, windowMilliseconds: Double, recovery: RecoveryLadder.Policy? = nil) {
        self.intervalMilliseconds = intervalMilliseconds
        self.windowMilliseconds = windowMilliseconds
        self.recovery = recovery
    }

    /// Packets read by one receive call, into one reused batch.
    static let packetsPerRead = 64
    /// Most receive calls for one source per poll, so one busy adapter cannot starve another.
    static let readsPerPoll = 4
}

/// Something that happened to an adapter, for the log and the status.
public struct AdapterReport: Sendable {
    public enum Event: Sendable {
        case ladder(RecoveryLadder.Event)
        case stepFailed(RecoveryLadder.Step, HCIError)
        case gone(HCIError)
        /// Back, scanning this way (legacy, extended, advertisement monitor, discovery).
        case back(String)
    }
    public var adapter: String
    public var event: Event
}
