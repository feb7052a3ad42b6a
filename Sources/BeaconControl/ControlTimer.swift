import NIOCore

/// When a control connection's time for its request line is up: on its event loop's timers (the system's monotonic
/// clock), or on a test's clock, which moves only when the test moves it.
///
/// A callback, not a `Clock`: a task sleeping on a `Clock` must first be started by Swift's cooperative pool, which
/// a loaded process may keep waiting longer than the deadline itself. An event loop's timer needs only the loop.
public struct ControlTimer: Sendable {
    public typealias Schedule =
        @Sendable (_ after: Duration, _ expire: @escaping @Sendable () -> Void) -> (@Sendable () -> Void)

    /// A test's: calls `expire` once `after` has passed on its clock, unless the cancel it returns is called first.
    private let custom: Schedule?

    public init(schedule: @escaping Schedule) { custom = schedule }

    private init() { custom = nil }

    /// The connection's own event loop's timers.
    public static let eventLoop = ControlTimer()

    /// Calls `expire` once `after` has passed, unless the cancel it returns is called first.
    func schedule(
        _ after: Duration, on loop: any EventLoop, _ expire: @escaping @Sendable () -> Void
    ) -> @Sendable () -> Void {
        if let custom { return custom(after, expire) }
        let task = loop.scheduleTask(in: TimeAmount(after)) { expire() }
        return { task.cancel() }
    }
}
