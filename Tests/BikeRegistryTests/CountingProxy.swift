import NIOCore
import NIOPosix
import Synchronization

/// A TCP proxy on loopback that counts the bytes a server sends its clients: what a station downloads, headers,
/// compression and all, measured on the wire rather than worked out.
final class CountingProxy: Sendable {
    let port: Int
    private let channel: any Channel
    private let counted: Counted

    final class Counted: Sendable {
        let downloaded = Atomic<Int>(0)
    }

    init(to target: Int) async throws {
        let counted = Counted()
        self.counted = counted
        channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { inbound in
                ClientBootstrap(group: inbound.eventLoop).connect(host: "127.0.0.1", port: target).flatMap {
                    outbound in
                    let (toServer, toClient) = Glue.pair(counting: counted)
                    return inbound.pipeline.addHandler(toServer).flatMap { outbound.pipeline.addHandler(toClient) }
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        port = channel.localAddress?.port ?? 0
    }

    /// Bytes sent to the clients so far.
    var downloaded: Int { counted.downloaded.load(ordering: .relaxed) }

    func stop() async { try? await channel.close() }

    /// One side of a connection, writing what it reads to the other side; the server's side counts.
    private final class Glue: ChannelDuplexHandler, @unchecked Sendable {
        typealias InboundIn = ByteBuffer
        typealias OutboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer

        private var partner: Glue?
        private var context: ChannelHandlerContext?
        private let counted: Counted?

        private init(counting counted: Counted?) { self.counted = counted }

        /// The client's side, and the server's, which counts what it reads.
        static func pair(counting counted: Counted) -> (Glue, Glue) {
            let (client, server) = (Glue(counting: nil), Glue(counting: counted))
            client.partner = server
            server.partner = client
            return (client, server)
        }

        func handlerAdded(context: ChannelHandlerContext) { self.context = context }

        func handlerRemoved(context: ChannelHandlerContext) {
            self.context = nil
            partner = nil
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let bytes = unwrapInboundIn(data)
            counted?.downloaded.add(bytes.readableBytes, ordering: .relaxed)
            partner?.send(bytes)
        }

        func channelInactive(context: ChannelHandlerContext) {
            partner?.context?.close(promise: nil)
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) { context.close(promise: nil) }

        private func send(_ bytes: ByteBuffer) {
            guard let context else { return }
            context.writeAndFlush(wrapOutboundOut(bytes), promise: nil)
        }
    }
}
