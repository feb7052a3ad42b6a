import Foundation
import LockedValue
import Synchronization

/// The far end of a SOCK_SEQPACKET socketpair, served by a thread of its own: what the fake controller and
/// the fake management channel are built on. Each packet the near side sends goes to `handle` with a way to
/// answer. The thread holds the server, never the fake, so releasing the fake stops the thread (it used to
/// hold the fake, which then never went away and polled for the rest of the test run).
final class SocketPairPeer: Sendable {
    /// The near end, for the code under test; whoever takes it closes it.
    let near: Int32
    private let server: Server

    final class Server: Sendable {
        let far: Int32
        let handle: @Sendable ([UInt8], Server) -> Void
        let stop = Atomic<Bool>(false)
        let finished = Atomic<Bool>(false)

        init(far: Int32, handle: @escaping @Sendable ([UInt8], Server) -> Void) {
            self.far = far
            self.handle = handle
        }

        /// Sends a packet to the near side.
        func send(_ packet: [UInt8]) {
            _ = packet.withUnsafeBytes { write(far, $0.baseAddress, $0.count) }
        }

        func serve() {
            defer { finished.store(true, ordering: .releasing) }
            var buffer = [UInt8](repeating: 0, count: 512)
            while !stop.load(ordering: .relaxed) {
                var poller = pollfd(fd: far, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, 20) > 0 else { continue }
                let count = buffer.withUnsafeMutableBytes { read(far, $0.baseAddress, $0.count) }
                guard count > 0 else { return }  // hung up
                handle(Array(buffer[..<count]), self)
            }
        }
    }

    init(handle: @escaping @Sendable ([UInt8], Server) -> Void) {
        var pair: [Int32] = [0, 0]
        precondition(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &pair) == 0)
        near = pair[0]
        let server = Server(far: pair[1], handle: handle)
        self.server = server
        Thread { server.serve() }.start()
    }

    deinit {
        server.stop.store(true, ordering: .relaxed)
        while !server.finished.load(ordering: .acquiring) { usleep(1_000) }
        close(server.far)
    }

    func send(_ packet: [UInt8]) { server.send(packet) }

    /// The far side goes away (a dongle pulled out): the near side reads end-of-file.
    func hangUp() { shutdown(server.far, Int32(SHUT_RDWR)) }
}

/// Packets a fake received, shared between its serving thread and the test.
final class PacketLog: Sendable {
    private let packets = LockedValue<[[UInt8]]>([])

    func append(_ packet: [UInt8]) { packets.withLock { $0.append(packet) } }
    var all: [[UInt8]] { packets.withLock { $0 } }
}
