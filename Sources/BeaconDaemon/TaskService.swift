public import ServiceLifecycle

/// Adapts a long-running loop that ends on cancellation (the poster, the refresher) to a `Service` that
/// ends on graceful shutdown.
public struct TaskService: Service, CustomStringConvertible {
    public let description: String
    private let body: @Sendable () async -> Void

    public init(_ name: String, _ body: @escaping @Sendable () async -> Void) {
        self.description = name
        self.body = body
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown { await body() }
    }
}

/// A loop that stops on its own when asked (`stop`), so that what it is doing when graceful shutdown comes is
/// finished rather than cancelled: the poster's post under way.
public struct StoppableService: Service, CustomStringConvertible {
    public let description: String
    private let body: @Sendable () async -> Void
    private let stop: @Sendable () -> Void

    public init(_ name: String, stop: @escaping @Sendable () -> Void, _ body: @escaping @Sendable () async -> Void) {
        self.description = name
        self.body = body
        self.stop = stop
    }

    public func run() async throws {
        await withGracefulShutdownHandler {
            await body()
        } onGracefulShutdown: {
            stop()
        }
    }
}
