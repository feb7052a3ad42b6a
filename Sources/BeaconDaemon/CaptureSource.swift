public import BeaconEngine
public import BeaconWire

/// Where adverts come from: a radio (`LiveCapture`) or a recorded capture (`ReplayCapture`). A source produces on its own
/// thread into the ring (the only producer), reports through its monitor, and stops when asked.
public protocol CaptureSource: Sendable {
    var status: CaptureStatus { get }
    /// Starts producing on a thread of its own; returns at once. Called once.
    func start(into ring: AdvertRing)
    /// Asks the thread to stop; `waitUntilStopped` returns once it has.
    func stop()
    func waitUntilStopped() async
    /// The engine's "now" on the source's clock: the monotonic clock for a radio, the replay's position in a replay.
    func now() -> CaptureTime
    /// What the source's times are: wall time (a replay) or nanoseconds of the monotonic clock (a radio).
    var timeBase: CaptureTimeBase { get }
    /// Whether time passes between adverts, so the engine's ticks close visits by the clock: a radio's and a paced
    /// replay's. Not a replay at full speed, whose only time is its adverts': a tick's sweep there would fall between
    /// them wherever the engine happened to be, and the same file would give other visits from run to run.
    var timePassesBetweenAdverts: Bool { get }
}

extension CaptureSource {
    public var timePassesBetweenAdverts: Bool { true }
}

/// What a capture source's `CaptureTime`s count: wall time since the epoch, or the monotonic clock's nanoseconds,
/// which are converted to wall time only to label what leaves the Pi.
public enum CaptureTimeBase: Sendable {
    case wall, monotonic
}
