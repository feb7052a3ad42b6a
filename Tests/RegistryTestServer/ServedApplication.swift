public import Hummingbird
import Logging
import ServiceLifecycle

/// A Hummingbird application served for a test, and stopped as a server is meant to stop: gracefully (it stops
/// accepting, answers what it is answering, and closes its connections), then cancelled only if a request the test
/// left hanging outlasts `patience`.
///
/// Not by cancelling its task at once: a connection the server has accepted but not yet taken from its listening
/// channel's stream when that task is cancelled is dropped unfinished, and swift-nio traps on it ("Deinited
/// NIOAsyncWriter without calling finish()", apple/swift-nio#3481), which takes the whole test process down. CI saw
/// it when a client connected just as a test ended.
public final class ServedApplication: Sendable {
    private let group: ServiceGroup
    private let task: Task<Void, any Error>
    /// Where it listens on loopback (0 if it stopped before it listened).
    public let port: Int

    /// Serves the application `make` builds, and returns once it listens. `make` is given what its
    /// `onServerRunning` calls with the port the system chose.
    public init(_ make: (_ listening: @escaping @Sendable (Int) -> Void) -> some ApplicationProtocol) async {
        let (ports, listening) = AsyncStream.makeStream(of: Int.self)
        let group = ServiceGroup(
            configuration: .init(
                services: [make { listening.yield($0) }],
                logger: Logger(label: "test-server", factory: { _ in SwiftLogNoOpLogHandler() })))
        self.group = group
        task = Task {
            defer { listening.finish() }
            try await group.run()
        }
        var port = 0
        for await listened in ports {
            port = listened
            break
        }
        self.port = port
    }

    /// A plain application of `router` on 127.0.0.1, at a port the system chooses.
    public convenience init(loopback router: Router<BasicRequestContext>) async {
        await self.init { listening in
            Application(
                router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                onServerRunning: { listening($0.localAddress?.port ?? 0) })
        }
    }

    /// Returns once the server has stopped.
    public func stop(patience: Duration = .seconds(10)) async {
        await group.triggerGracefulShutdown()
        let task = self.task
        let impatience = Task {
            guard (try? await Task.sleep(for: patience)) != nil else { return }  // stopped in time
            task.cancel()
        }
        _ = await task.result
        impatience.cancel()
    }

    /// Cancels the server's task: for a test of what a cancelled server does, once no connection is being accepted.
    public func cancel() async {
        task.cancel()
        _ = await task.result
    }
}
