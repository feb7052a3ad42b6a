import HummingbirdCore
import Logging
import NIOCore

/// Hummingbird's HTTP/1 channel with the registry's handlers: each connection's deadlines (`ConnectionWatch`) around
/// the HTTP decoder, and the station's refreshes answered on the event loop, before the decoder from the bytes read
/// (`RefreshFastPath`) and after it from the decoded head (`RefreshShortcut`). A new `HTTP1Channel` per connection,
/// since the handlers it adds after the decoder share the connection's watch with those added before it.
struct GuardedHTTP1Channel: HTTPChannelHandler {
    typealias Value = HTTP1Channel.Value

    let responder: Responder
    let head: Duration
    let idle: Duration
    /// The refreshes answered on the event loop; nil answers every request through the router.
    let refreshes: EventLoopRefreshes?

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let watch = ConnectionWatch(head: head, idle: idle)
        let (responder, refreshes) = (self.responder, self.refreshes)
        return channel.eventLoop.makeCompletedFuture {
            let raw = RawBytesWatch(watch)
            try channel.pipeline.syncOperations.addHandler(raw, position: .first)
            if let refreshes {
                try channel.pipeline.syncOperations.addHandler(
                    RefreshFastPath(refreshes, watch: watch), position: .after(raw))
            }
        }.flatMap {
            HTTP1Channel(
                responder: responder,
                configuration: .init(
                    additionalChannelHandlers: [RequestPartsWatch(watch)]
                        + (refreshes.map { [RefreshShortcut($0)] } ?? []))
            ).setup(channel: channel, logger: logger)
        }
    }

    func handle(value: Value, logger: Logger) async {
        await handleHTTP(asyncChannel: value, logger: logger)
    }
}
