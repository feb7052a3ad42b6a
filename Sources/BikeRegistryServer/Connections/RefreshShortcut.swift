import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTPTypes

/// A station's refresh that memory answers 304 (`StationRoutes.notModified`), answered on the connection's event
/// loop as it is read, before Hummingbird's router: most requests a registry serves are these, and handing each to a
/// task on Swift's thread pool and its answer back costs most of the time it takes (docs/performance-history.md, "bike-registry").
/// Everything else, and any refresh memory cannot answer, goes on to the router unchanged.
///
/// Answers stay in the order requests came: a request is answered here only when the router owes no answer on the
/// connection (a pipelined refresh behind a routed request waits its turn in the router).
final class RefreshShortcut: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let routes: StationRoutes
    private let date: HTTPDate
    private let serverName: String
    private let logger: Logger
    private let metrics: RegistryMetrics?
    /// Requests passed to the router whose answer has not ended yet.
    private var owed = 0
    /// The request being read was answered here: its body and end are dropped.
    private var answered = false

    init(routes: StationRoutes, date: HTTPDate, serverName: String, logger: Logger, metrics: RegistryMetrics?) {
        self.metrics = metrics
        self.routes = routes
        self.date = date
        self.serverName = serverName
        self.logger = logger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let request):
            // Only a plain GET is looked at further (a request that asks about the connection, to close or upgrade
            // it, is the router's), so a sighting's POST costs no parse or clock read here.
            if owed == 0, request.method == .get, request.headerFields[.connection] == nil {
                let started = ContinuousClock.now
                let uri = URI(request.path ?? "")
                if uri.path == "/bikes",
                    let etag = routes.notModified(query: uri.queryParameters, headers: request.headerFields)
                {
                    answered = true
                    var head = HTTPResponse(status: .notModified)
                    head.headerFields = [.eTag: etag, .date: date.now, .server: serverName]
                    context.write(wrapOutboundOut(.head(head)), promise: nil)
                    context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
                    metrics?.record(method: .get, route: "/bikes", status: 304, after: .now - started)
                    RequestLogLine.write(
                        logger, method: request.method, path: LoggedPath(route: "/bikes", path: uri.path), status: 304,
                        since: started)
                    return
                }
            }
            owed += 1
        case .body:
            if answered { return }
        case .end:
            if answered {
                answered = false
                return
            }
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { owed -= 1 }
        context.write(data, promise: promise)
    }
}
