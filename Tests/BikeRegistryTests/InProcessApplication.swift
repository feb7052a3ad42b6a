import Foundation
import Hummingbird
import HummingbirdTesting

/// The registry's application run in this process with no socket: requests go straight to its router
/// (Hummingbird's testing client, `app.test(.router)`), while its services (the list in memory, the notification
/// worker, the sweeps) run as they do when it serves. For the suites whose subject is the registry's rules, not its
/// connections: each request costs no connection, and nothing waits on the loopback's accepts.
final class InProcessApplication: Sendable {
    let client: any TestClientProtocol
    private let task: Task<Void, any Error>
    private let stopping: AsyncStream<Void>.Continuation

    init(_ app: some ApplicationProtocol & Sendable) async throws {
        let (clients, published) = AsyncStream.makeStream(of: (any TestClientProtocol).self)
        let (stops, stopping) = AsyncStream.makeStream(of: Void.self)
        self.stopping = stopping
        task = Task {
            defer { published.finish() }
            try await app.test(.router) { client in
                published.yield(client)
                for await _ in stops {}
            }
        }
        guard let client = await clients.first(where: { _ in true }) else {
            try await task.value
            throw HarnessError("the application stopped before it could be asked anything")
        }
        self.client = client
    }

    /// Stops its services gracefully, as a SIGTERM would, and returns once they have ended.
    func stop() async {
        stopping.finish()
        _ = try? await task.value
    }
}
