import BeaconPOSIX
public import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
public import ServiceLifecycle

#if canImport(Glibc)
import Glibc
#endif

/// The control socket: a Unix stream socket in the runtime directory, mode 0660, so the daemon's user and
/// group (and root) may connect and nobody else. `status` is for anyone who can connect; `refresh` and
/// `retry-dead-letters` are checked again against the kernel's word on who the peer is (ControlAnswers).
///
/// Connections are served by swift-nio, every client at once (ControlConnection), each given `requestDeadline`
/// for its request line. They are accepted here, on a thread of the server's own, because the peer's groups must
/// be read from the kernel at once, and NIO's socket options cannot: it reads an option into a zero-filled buffer
/// of the value's size and drops the length the kernel returns, so that for SO_PEERGROUPS "group 0" and "no more
/// groups" look the same, and an outsider would pass for root's group. The descriptor then goes to NIO.
/// At most `maximumClients` are served at once; more wait in the kernel's backlog until one is done.
public final class ControlServer: Service {
    public let path: String
    private let listener: UnixSocket
    private let answers: ControlAnswers
    private let timer: ControlTimer
    private let gate = AnswerGate()
    private let thread = LoopThread()
    private let connections = ControlConnections()
    static let requestDeadline = Duration.seconds(2)
    static let maximumClients = 32

    /// Binds now, so a socket that cannot be made stops the daemon before it starts, with the reason. The request
    /// deadlines are on `timer`: swift-nio's, or a test's.
    public init(
        path: String, status: @escaping @Sendable () -> StatusReport, refresh: @escaping @Sendable () -> Void,
        retryDeadLetters: @escaping @Sendable () -> Result<Int, any Error>, logger: Logger,
        timer: ControlTimer = .eventLoop
    ) throws {
        self.path = path
        self.listener = try UnixSocket.listen(path: path, mode: 0o660)
        self.answers = ControlAnswers(
            status: status, refresh: refresh, retryDeadLetters: retryDeadLetters,
            socketGroup: {
                var information = stat()
                return stat(path, &information) == 0 ? information.st_gid : getegid()
            }, logger: logger)
        self.timer = timer
    }

    public func run() async throws {
        // A loop of its own, as the poll thread before it was: the loops every other NIO user in the process shares
        // (the registry client, /metrics; in the tests, dozens of servers) do not hold up `status` or a deadline.
        // Made at the first connection: a station whose registry is a file runs no other NIO, and the loop's
        // thread and code cost it 1.7 MiB of peak RSS (16.5 MiB against the 16 MiB goal, in `.ci/run` of f040d08)
        // whether or not anyone ever asks.
        let loop = FirstUse { MultiThreadedEventLoopGroup(numberOfThreads: 1) }
        thread.start(name: "beacond-control") { [self] in acceptUntilStopped(into: loop) }
        try? await gracefulShutdown()
        thread.stop()
        await thread.waitUntilStopped()
        // No answer is made past the gate: the status reads what the daemon closes once its services have stopped.
        gate.close()
        await connections.closeAll()
        try? await loop.made?.shutdownGracefully()
        unlink(path)
    }

    private func acceptUntilStopped(into loop: FirstUse<MultiThreadedEventLoopGroup>) {
        while !thread.stopRequested {
            guard connections.count < Self.maximumClients else {
                SystemTime.sleep(milliseconds: 10)
                continue
            }
            do {
                if let client = try listener.accept(milliseconds: 200) { serve(client, on: loop.value) }
            } catch {
                answers.logger.error("control socket: accept failed", metadata: ["error": "\(error)"])
                SystemTime.sleep(milliseconds: 100)  // out of descriptors, say: not a busy loop meanwhile
            }
        }
    }

    /// Reads who the client is, then hands its descriptor to swift-nio, which owns and closes it from then on.
    private func serve(_ client: UnixSocket, on loop: MultiThreadedEventLoopGroup) {
        let peer = client.peer.map { ControlPeer(uid: $0.uid, gid: $0.gid, groups: client.peerGroups) }
        let respond: ControlConnection.Respond = { [answers, gate] line, peer in
            gate.whileOpen { answers.answer(line, from: peer) }
        }
        let timer = timer
        let channel = ClientBootstrap(group: loop)
            .channelOption(.allowRemoteHalfClosure, value: true)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        ControlConnection(
                            peer: peer, timer: timer, requestDeadline: Self.requestDeadline, respond: respond))
                }
            }
            .withConnectedSocket(client.release())
        connections.add(channel, logger: answers.logger)
    }
}

/// A value made when it is first asked for, on whichever thread asks; `made` is it if it was.
private final class FirstUse<Value: Sendable>: Sendable {
    private let make: @Sendable () -> Value
    private let stored = NIOLockedValueBox<Value?>(nil)

    init(_ make: @escaping @Sendable () -> Value) { self.make = make }

    var value: Value {
        stored.withLockedValue { value in
            if let value { return value }
            let made = make()
            value = made
            return made
        }
    }

    var made: Value? { stored.withLockedValue { $0 } }
}

/// The answers' maker until the server stops; after `close` returns, none is being made and none will be.
private final class AnswerGate: Sendable {
    private let open = NIOLockedValueBox(true)

    /// `make`'s answer, or nil once closed. Made under the lock, so that `close` waits for one being made.
    func whileOpen(_ make: () -> ControlResponse) -> ControlResponse? {
        open.withLockedValue { open in open ? make() : nil }
    }

    func close() { open.withLockedValue { $0 = false } }
}
