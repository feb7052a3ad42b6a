import HummingbirdCore
import Logging
import NIOCore

/// Hummingbird's HTTP/1 channel with the registry's handlers: each connection's deadlines (`ConnectionWatch`) around
/// the HTTP decoder, and the refresh shortcut. A new `HTTP1Channel` per connection, since the handlers it adds after
/// the decoder share the connection's watch with the one added before it.
struct GuardedHTTP1Channel: HTTPChannelHandler {
    typealias Value = HTTP1Channel.Value

    let responder: Responder
    let head: Duration
    let idle: Duration
    /// The handlers after the deadlines' (the refresh shortcut), new for each connection.
    let handlers: @Sendable () -> [any RemovableChannelHandler]

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let watch = ConnectionWatch(head: head, idle: idle)
        let (responder, handlers) = (self.responder, self.handlers)
        return channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(RawBytesWatch(watch), position: .first)
        }.flatMap {
            HTTP1Channel(
                responder: responder,
                configuration: .init(additionalChannelHandlers: [RequestPartsWatch(watch)] + handlers())
            ).setup(channel: channel, logger: logger)
        }
    }

    func handle(value: Value, logger: Logger) async {
        await handleHTTP(asyncChannel: value, logger: logger)
    }
}
