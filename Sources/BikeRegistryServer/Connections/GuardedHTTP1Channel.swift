import HummingbirdCore
import Logging
import NIOCore

/// Hummingbird's HTTP/1 channel with each connection's deadlines (`ConnectionWatch`) around the HTTP decoder. A new
/// `HTTP1Channel` per connection, since the handler it adds after the decoder shares the connection's watch with the
/// one added before it.
struct GuardedHTTP1Channel: HTTPChannelHandler {
    typealias Value = HTTP1Channel.Value

    let responder: Responder
    let head: Duration
    let idle: Duration

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let watch = ConnectionWatch(head: head, idle: idle)
        let responder = self.responder
        return channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(RawBytesWatch(watch), position: .first)
        }.flatMap {
            HTTP1Channel(
                responder: responder,
                configuration: .init(additionalChannelHandlers: [RequestPartsWatch(watch)])
            ).setup(channel: channel, logger: logger)
        }
    }

    func handle(value: Value, logger: Logger) async {
        await handleHTTP(asyncChannel: value, logger: logger)
    }
}
