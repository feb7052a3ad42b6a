import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTPTypes

/// A station's refresh that memory answers 304 (`StationRoutes.heldAnswer`), answered on the connection's event
/// loop as it is decoded, before Hummingbird's router: most requests a registry serves are these, and handing each to a
/// task on Swift's thread pool and its answer back costs most of the time it takes (docs/performance-history.md, "bike-registry").
/// Everything else, and any refresh memory cannot answer, goes on to the router unchanged. `RefreshFastPath`
/// answers most of these before they are decoded; this one answers those on a connection that has had other
/// requests.
///
/// Answers stay in the order requests came: a request is answered here only when the router owes no answer on the
/// connection (a pipelined refresh behind a routed request waits its turn in the router).
final class RefreshShortcut: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let refreshes: EventLoopRefreshes
    /// Requests passed to the router whose answer has not ended yet.
    private var owed = 0
    /// The request being read was answered here: its body and end are dropped.
    private var answered = false

    init(_ refreshes: EventLoopRefreshes) {
        self.refreshes = refreshes
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
                    case .notModified(let etag) = refreshes.routes.heldAnswer(
                        RefreshRequest(query: uri.queryParameters, headers: request.headerFields), changes: false)
                {
                    answered = true
                    var head = HTTPResponse(status: .notModified)
                    head.headerFields = [.eTag: etag, .date: refreshes.date.now, .server: refreshes.serverName]
                    context.write(wrapOutboundOut(.head(head)), promise: nil)
                    context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
                    refreshes.record(status: 304, path: uri.path, since: started)
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
