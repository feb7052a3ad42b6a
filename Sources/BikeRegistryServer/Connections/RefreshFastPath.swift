import HTTPTypes
import HummingbirdCore
import NIOCore

/// A station's refresh that memory answers (304, or 226 with changes already encoded: `StationRoutes.heldAnswer`),
/// answered from the bytes the connection read, before the HTTP decoder. Most requests a registry serves are these,
/// and decoding each into HTTP/1 parts, converting those to HTTPTypes and encoding the answer back cost several
/// times what a static file server spends on one (docs/performance-history.md, "The refresh read from its bytes").
///
/// Only while the connection has sent nothing else: the first bytes that are not a plain `GET` head this reads
/// (`PlainGetHead`) and memory answers go on to the decoder, and everything after them, for the life of the
/// connection (`RefreshShortcut` answers there). So the decoder only ever starts at a request's first byte, and
/// answers keep the order requests came in: each head read here is answered before the next is looked at. Several
/// heads in one read (pipelined) are answered in turn; a head split over reads is kept (at most
/// `PlainGetHead.limit` bytes) until it is whole.
///
/// Answers written here wait in memory while the client does not read them; past the channel's high-water mark
/// nothing more is read from the connection until they drain, so a client that sends and never reads holds a
/// bounded amount of the server's memory.
final class RefreshFastPath: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    private let refreshes: EventLoopRefreshes
    private let watch: ConnectionWatch
    /// Nothing has gone to the decoder yet.
    private var open = true
    /// A read asked for while answers could not be written.
    private var readHeld = false
    /// The start of a head whose end has not come yet.
    private var partial: ByteBuffer?

    init(_ refreshes: EventLoopRefreshes, watch: ConnectionWatch) {
        self.refreshes = refreshes
        self.watch = watch
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard open else {
            context.fireChannelRead(data)
            return
        }
        var buffer = unwrapInboundIn(data)
        if var kept = partial.take() {
            kept.writeBuffer(&buffer)
            buffer = kept
        }
        var answered = false
        reading: while buffer.readableBytes > 0 {
            let started = ContinuousClock.now
            switch buffer.withUnsafeReadableBytes(PlainGetHead.front) {
            case .head(let head) where answer(head, since: started, context: context):
                buffer.moveReaderIndex(forwardBy: head.length)
                answered = true
                watch.change {
                    $0.headRead(at: started)
                    $0.requestRead()
                    $0.answerWritten(at: .now)
                }
            case .incomplete:
                partial = buffer
                if answered {
                    context.flush()
                    watch.bytesRead()
                }
                return
            case .head, .other:
                break reading
            }
        }
        if answered { context.flush() }
        guard buffer.readableBytes > 0 else { return }
        open = false
        if answered { watch.bytesRead() }
        context.fireChannelRead(wrapInboundOut(buffer))
    }

    /// Writes the answer memory gives `head`, read at `started`; false when it gives none and the decoder must read it.
    private func answer(_ head: PlainGetHead, since started: ContinuousClock.Instant, context: ChannelHandlerContext)
        -> Bool
    {
        let uri = URI(head.target)
        guard uri.path == "/bikes",
            let held = refreshes.routes.heldAnswer(
                RefreshRequest(query: uri.queryParameters, head: head), changes: true)
        else { return false }
        var out = context.channel.allocator.buffer(capacity: 256)
        switch held {
        case .notModified(let etag):
            out.writeString("HTTP/1.1 304 Not Modified\r\nETag: \(etag)\r\n")
            writeEnd(of: &out)
            context.write(wrapOutboundOut(.byteBuffer(out)), promise: nil)
            refreshes.record(status: 304, path: uri.path, since: started)
        case .changes(let etag, let encoded):
            let (fields, body) = StationRoutes.sent(
                StationRoutes.changesHeaders(etag), body: encoded.body, gzipped: encoded.gzipped,
                acceptEncoding: head.acceptEncoding)
            out.writeString("HTTP/1.1 226 IM Used\r\n")
            for field in fields { out.writeString("\(field.name.rawName): \(field.value)\r\n") }
            out.writeString("Content-Length: \(body.readableBytes)\r\n")
            writeEnd(of: &out)
            context.write(wrapOutboundOut(.byteBuffer(out)), promise: nil)
            context.write(wrapOutboundOut(.byteBuffer(body)), promise: nil)
            refreshes.record(status: 226, path: uri.path, since: started)
        }
        return true
    }

    /// The headers every answer ends with, and the empty line.
    private func writeEnd(of out: inout ByteBuffer) {
        out.writeString("Date: \(refreshes.date.now)\r\nServer: \(refreshes.serverName)\r\n\r\n")
    }

    func read(context: ChannelHandlerContext) {
        if open, !context.channel.isWritable {
            readHeld = true
            watch.change { $0.answersWaiting() }
        } else {
            context.read()
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if readHeld, context.channel.isWritable {
            readHeld = false
            let headBegun = partial != nil
            watch.change {
                $0.answersDrained(at: .now)
                if headBegun { $0.bytesRead(at: .now) }
            }
            context.read()
        }
        context.fireChannelWritabilityChanged()
    }
}
