import NIOCore

/// One control connection on swift-nio: its request line, then one answer, then it is closed.
///
/// The line is what comes before the first newline, or everything when the client shuts its side (a request without
/// its newline is still a request). A client that sends nothing whole within `requestDeadline` of its connection
/// (on the server's clock), or `ControlRequest.maximumBytes` without a newline, is answered with the reason. So a
/// client that connects and says nothing, or trickles its request, holds only its own connection.
final class ControlConnection: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// The answer to a line (nil: the server has stopped, and nothing is answered).
    typealias Respond = @Sendable ([UInt8], ControlPeer?) -> ControlResponse?

    private let peer: ControlPeer?
    private let timer: ControlTimer
    private let requestDeadline: Duration
    private let respond: Respond
    private var received: [UInt8] = []
    private var answered = false
    /// Cancels the request line's deadline.
    private var cancelDeadline: (@Sendable () -> Void)?

    init(peer: ControlPeer?, timer: ControlTimer, requestDeadline: Duration, respond: @escaping Respond) {
        self.peer = peer
        self.timer = timer
        self.requestDeadline = requestDeadline
        self.respond = respond
    }

    func channelActive(context: ChannelHandlerContext) {
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        cancelDeadline = timer.schedule(requestDeadline, on: context.eventLoop) {
            bound.eventLoop.execute {
                let (connection, context) = bound.value
                connection.finish(context, line: nil)
            }
        }
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !answered else { return }
        var bytes = unwrapInboundIn(data)
        let room = ControlRequest.maximumBytes - received.count
        received += bytes.readBytes(length: min(room, bytes.readableBytes)) ?? []
        if let newline = received.firstIndex(of: UInt8(ascii: "\n")) {
            finish(context, line: Array(received[..<newline]))
        } else if received.count >= ControlRequest.maximumBytes {
            finish(context, line: nil)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // The client shut its side: what it sent is its request; nothing is the reason.
        if case .some(.inputClosed) = event as? ChannelEvent {
            finish(context, line: received.isEmpty ? nil : received)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        // Nothing more for a connection that has gone, not even a deadline that expired as it went.
        answered = true
        cancelDeadline?()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A client that went away (reset, broken pipe) is owed nothing.
        context.close(promise: nil)
    }

    /// Answers once and closes: when the answer is written, or after 2 s of a client that does not take it.
    private func finish(_ context: ChannelHandlerContext, line: [UInt8]?) {
        guard !answered else { return }
        answered = true
        cancelDeadline?()
        let response =
            line.map { respond($0, peer) }
            ?? ControlResponse(
                ok: false,
                error:
                    "no request line within \(ControlRequest.maximumBytes) bytes and \(requestDeadline.components.seconds) s"
            )
        guard let response else {
            context.close(promise: nil)
            return
        }
        let channel = context.channel
        let unread = context.eventLoop.scheduleTask(in: .seconds(2)) { channel.close(promise: nil) }
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: response.line))).whenComplete { _ in
            unread.cancel()
            channel.close(promise: nil)
        }
    }
}
