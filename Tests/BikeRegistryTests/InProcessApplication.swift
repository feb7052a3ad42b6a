import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import ServiceLifecycle

/// The registry's application run in this process with no socket: each request goes straight to its responder (the
/// router with its middleware), while its services (the list in memory, the notification worker, the sweeps) run as
/// they do when it serves. For the suites whose subject is the registry's rules, not its connections.
///
/// As Hummingbird's testing client does, with one difference that matters under LeakSanitizer: every request's
/// context is made on one testing channel, closed when the application stops. HummingbirdTesting's `.router` makes
/// a channel for each request and never closes it; each stayed behind with its pipeline, event loop and dispatch
/// queue (3.6 MB over the suite's 699 requests, which failed the AddressSanitizer step).
final class InProcessApplication: Sendable {
    /// An answer: its head and its whole body.
    struct Answer: Sendable {
        var head: HTTPResponse
        var body: ByteBuffer
    }

    /// A request answered by the responder, its context made on `channel`.
    private let respond: @Sendable (Request) async throws -> Response
    private let channel: NIOAsyncTestingChannel
    private let group: ServiceGroup
    private let task: Task<Void, any Error>

    init(_ app: some ApplicationProtocol) async throws {
        let responder = try await app.responder
        let channel = NIOAsyncTestingChannel()
        let logger = app.logger
        respond = { request in
            let context = type(of: responder).Context(
                source: ApplicationRequestContextSource(channel: channel, logger: logger))
            do {
                return try await responder.respond(to: request, context: context)
            } catch {
                // The router answers an HTTP error itself; anything else would be the server's 500.
                return Response(status: .internalServerError)
            }
        }
        self.channel = channel
        let (started, starting) = AsyncStream.makeStream(of: Void.self)
        group = ServiceGroup(
            configuration: .init(
                services: app.services + [Started(continuation: starting)],
                logger: Logger(label: "test-registry", factory: { _ in SwiftLogNoOpLogHandler() })))
        for process in app.processesRunBeforeServerStart { try await process() }
        task = Task { [group] in try await group.run() }
        // Asked nothing before the services run (a shutdown before then would find them not yet started).
        for await _ in started { break }
    }

    func request(_ method: HTTPRequest.Method, _ path: String, headers: HTTPFields, body: ByteBuffer?) async throws
        -> Answer
    {
        var headers = headers
        if let body { headers[.contentLength] = String(body.readableBytes) }
        let request = Request(
            head: HTTPRequest(
                method: method, scheme: "http", authority: "localhost", path: path, headerFields: headers),
            body: RequestBody(buffer: body ?? ByteBuffer()))
        let response = try await respond(request)
        let collected = Collected()
        try await response.body.write(Collected.Writer(into: collected))
        return Answer(head: response.head, body: collected.body.withLockedValue { $0 })
    }

    /// Stops its services gracefully, as a SIGTERM would, returns once they have ended, and closes the channel.
    func stop() async {
        await group.triggerGracefulShutdown()
        _ = try? await task.value
        try? await channel.close()
    }

    /// The response body, written whole.
    private final class Collected: Sendable {
        let body = NIOLockedValueBox(ByteBuffer())

        struct Writer: ResponseBodyWriter {
            let into: Collected
            func write(_ buffer: ByteBuffer) async throws {
                into.body.withLockedValue { _ = $0.writeImmutableBuffer(buffer) }
            }
            consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
        }
    }

    /// Says the group has started its services, then waits for the shutdown.
    private struct Started: Service {
        let continuation: AsyncStream<Void>.Continuation
        func run() async throws {
            continuation.yield()
            continuation.finish()
            try? await gracefulShutdown()
        }
    }
}
