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
