import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
public import ServiceLifecycle
public import StationSettings

/// `/metrics` over HTTP for Prometheus, when `metrics-listen` is set: one listening socket on NIO's shared event
/// loops (the registry client's own), idle until scraped. GET or HEAD `/metrics` only; anything else is a 404 or
/// 405 with a line saying what is there. The page is made on the event loop: it reads the outbox's counts (a few
/// SQLite reads, well under a millisecond), which is less than handing it to another thread would cost.
public final class MetricsServer: Service, CustomStringConvertible {
    public let description = "metrics"
    private let channel: any Channel
    private let gate: PageGate
    /// Where it listens (the port the system chose, when the configuration said 0).
    public let boundPort: Int

    private init(channel: any Channel, gate: PageGate) {
        self.channel = channel
        self.gate = gate
        boundPort = channel.localAddress?.port ?? 0
    }

    /// Listens now, so that an address in use or refused is a start-up error, not a service that fails later.
    public static func listen(
        on address: MetricsAddress, page: @escaping @Sendable () -> [UInt8]
    ) async throws -> MetricsServer {
        let gate = PageGate(page)
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 16)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    // A scraper that opens a connection and says nothing is let go after half a minute.
                    try pipeline.addHandler(IdleStateHandler(readTimeout: .seconds(30)))
                    try pipeline.configureHTTPServerPipeline(withErrorHandling: true)
                    try pipeline.addHandler(MetricsHandler(page: gate.page))
                }
            }
            .bind(host: address.host, port: address.port).get()
        return MetricsServer(channel: channel, gate: gate)
    }

    public func run() async throws {
        try? await gracefulShutdown()
        // Closing the listener leaves a scraper's kept-alive connection open; the page reads the outbox, which the
        // daemon closes once the services have stopped. Past the gate no page is made (ThreadSanitizer caught a
        // scrape reading the closed outbox, and the daemon crashing after "stopped cleanly").
        gate.close()
        try? await channel.close()
    }
}

/// The page's maker until the server stops; after `close` returns, none is running and none will run.
private final class PageGate: Sendable {
    private let open: NIOLockedValueBox<Bool> = NIOLockedValueBox(true)
    private let make: @Sendable () -> [UInt8]

    init(_ make: @escaping @Sendable () -> [UInt8]) { self.make = make }

    /// The page, or nil once closed. Made under the lock, so that `close` waits for one being made.
    @Sendable func page() -> [UInt8]? {
        open.withLockedValue { open in open ? make() : nil }
    }

    func close() { open.withLockedValue { $0 = false } }
}

/// One connection's requests, answered in turn (NIO's pipeline handler keeps pipelined requests in order).
private final class MetricsHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let page: @Sendable () -> [UInt8]?
    private var request: HTTPRequestHead?

    init(page: @escaping @Sendable () -> [UInt8]?) { self.page = page }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): request = head
        case .body: break  // a scrape has none; anything sent is not read
        case .end:
            guard let head = request else { return }
            request = nil
            answer(head, context: context)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is IdleStateHandler.IdleStateEvent {
            context.close(promise: nil)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    private func answer(_ request: HTTPRequestHead, context: ChannelHandlerContext) {
        let path = request.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        var headers = HTTPHeaders()
        let status: HTTPResponseStatus
        let body: [UInt8]
        if path != "/metrics" {
            status = .notFound
            headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
            body = Array("beacond serves its metrics on /metrics, and nothing else here\n".utf8)
        } else if request.method != .GET && request.method != .HEAD {
            status = .methodNotAllowed
            headers.add(name: "Allow", value: "GET, HEAD")
            headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
            body = Array("/metrics is read with GET\n".utf8)
        } else if let page = page() {
            status = .ok
            // Prometheus's text format, version 0.0.4.
            headers.add(name: "Content-Type", value: "text/plain; version=0.0.4; charset=utf-8")
            body = page
        } else {
            status = .serviceUnavailable
            headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
            body = Array("beacond is stopping\n".utf8)
        }
        headers.add(name: "Content-Length", value: "\(body.count)")
        headers.add(name: "Cache-Control", value: "no-store")
        let keepAlive = request.isKeepAlive
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: request.version, status: status, headers: headers))),
            promise: nil)
        if request.method != .HEAD {
            context.write(
                wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: body)))), promise: nil)
        }
        let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive {
            let channel = context.channel
            written.whenComplete { _ in channel.close(promise: nil) }
        }
    }
}
