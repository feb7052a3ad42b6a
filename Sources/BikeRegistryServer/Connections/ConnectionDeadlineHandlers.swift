import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// A connection's deadlines (`ConnectionDeadlines`), kept by two handlers of its pipeline: `RawBytesWatch`, first,
/// sees bytes arrive before the HTTP decoder has a whole head; `RequestPartsWatch`, after it, sees heads, ends and
/// the answers written. Both run on the connection's event loop, and so does everything here.
final class ConnectionWatch: @unchecked Sendable {
    private var deadlines: ConnectionDeadlines<ContinuousClock>
    private var timer: (task: Scheduled<Void>, at: ContinuousClock.Instant)?
    private var context: ChannelHandlerContext?

    init(head: Duration, idle: Duration) {
        deadlines = ConnectionDeadlines(head: head, idle: idle, now: .now)
    }

    func started(_ context: ChannelHandlerContext) {
        self.context = context
        arm()
    }

    func stopped() {
        timer?.task.cancel()
        timer = nil
        context = nil
    }

    /// Bytes arrived: only the first of a request changes anything (and only then is the clock read).
    func bytesRead() {
        if case .waiting = deadlines.phase { change { $0.bytesRead(at: .now) } }
    }

    /// A change of phase. The timer is moved only when the deadline comes sooner than it is set for (a request's
    /// first byte): a later deadline is found when the timer fires, so a request costs one timer, not one a phase.
    func change(_ body: (inout ConnectionDeadlines<ContinuousClock>) -> Void) {
        body(&deadlines)
        if let deadline = deadlines.deadline, timer.map({ deadline < $0.at }) ?? true { arm() }
    }

    /// One timer at the current deadline; when it fires past it the connection is closed, and otherwise set again.
    private func arm() {
        timer?.task.cancel()
        timer = nil
        guard let context, let deadline = deadlines.deadline else { return }
        let wait = deadline - .now
        let nanoseconds = max(0, wait.components.seconds * 1_000_000_000 + wait.components.attoseconds / 1_000_000_000)
        let task = context.eventLoop.assumeIsolatedUnsafeUnchecked().scheduleTask(in: .nanoseconds(nanoseconds)) {
            [self] in
            timer = nil
            if deadlines.expired(at: .now) {
                context.close(promise: nil)
            } else {
                arm()
            }
        }
        timer = (task, deadline)
    }
}

/// First in the pipeline: a request's first byte starts its head's clock.
final class RawBytesWatch: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let watch: ConnectionWatch

    init(_ watch: ConnectionWatch) { self.watch = watch }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { watch.started(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        watch.started(context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        watch.stopped()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) { watch.stopped() }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        watch.bytesRead()
        context.fireChannelRead(data)
    }
}

/// After the HTTP decoder: heads and ends read, answers' ends written.
final class RequestPartsWatch: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let watch: ConnectionWatch

    init(_ watch: ConnectionWatch) { self.watch = watch }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head: watch.change { $0.headRead(at: .now) }
        case .body: break
        case .end: watch.change { $0.requestRead() }
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { watch.change { $0.answerWritten(at: .now) } }
        context.write(data, promise: promise)
    }
}
