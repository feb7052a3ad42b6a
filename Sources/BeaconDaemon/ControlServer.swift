public import BeaconOutbox
import BeaconPOSIX
public import Logging
public import ServiceLifecycle

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// The control socket: a Unix stream socket in the runtime directory, mode 0660, so the daemon's user and
/// group (and root) may connect and nobody else. `status` is for anyone who can connect; `refresh` and
/// `retry-dead-letters` are checked
/// again against the kernel's word on who the peer is (SO_PEERCRED, SO_PEERGROUPS): root, the daemon's user, or a
/// member of the socket's group.
///
/// One thread serves every client at once: it polls the listening socket and each connection, so clients that
/// connect and say nothing, or trickle their request a byte at a time, hold only their own connection. Each gets
/// `requestDeadline` from its connection to a whole request line; then it is answered with the reason and closed.
/// At most `maximumClients` wait at once; more wait in the kernel's backlog until one is done.
public final class ControlServer: Service {
    public let path: String
    private let socket: UnixSocket
    private let status: @Sendable () -> StatusReport
    private let refresh: @Sendable () -> Void
    /// Puts the dead letters back in the queue; how many, or why not.
    private let retryDeadLetters: @Sendable () -> Result<Int, OutboxError>
    private let logger: Logger
    private let thread = LoopThread()
    static let requestDeadlineMilliseconds: Int64 = 2_000
    static let maximumClients = 32

    /// Binds now, so a socket that cannot be made stops the daemon before it starts, with the reason.
    public init(
        path: String, status: @escaping @Sendable () -> StatusReport, refresh: @escaping @Sendable () -> Void,
        retryDeadLetters: @escaping @Sendable () -> Result<Int, OutboxError>, logger: Logger
    ) throws {
        self.path = path
        self.socket = try UnixSocket.listen(path: path, mode: 0o660)
        self.status = status
        self.refresh = refresh
        self.retryDeadLetters = retryDeadLetters
        self.logger = logger
    }

    public func run() async throws {
        thread.start(name: "beacond-control") { [self] in serve() }
        try? await gracefulShutdown()
        thread.stop()
        await thread.waitUntilStopped()
        unlink(path)
    }

    /// A connection waiting for its request line.
    private struct Client {
        let socket: UnixSocket
        var received: [UInt8] = []
        let deadline: Int64
    }

    private func serve() {
        var clients: [Client] = []
        while !thread.stopRequested {
            let now = SystemTime.monotonicNanoseconds() / 1_000_000
            // Answer whoever has run out of time, then wait for the next event or the nearest deadline.
            for client in clients where client.deadline <= now { finish(client, line: nil) }
            clients.removeAll { $0.deadline <= now }
            let accepting = clients.count < Self.maximumClients
            var descriptors = (accepting ? [socket.descriptor] : []).map {
                pollfd(fd: $0, events: Int16(POLLIN), revents: 0)
            }
            descriptors += clients.map { pollfd(fd: $0.socket.descriptor, events: Int16(POLLIN), revents: 0) }
            let nearest = clients.map(\.deadline).min().map { max(0, $0 - now) } ?? 200
            let ready = poll(&descriptors, nfds_t(descriptors.count), Int32(min(200, nearest)))
            if ready < 0 {
                if errno == EINTR { continue }
                logger.error(
                    "control socket: poll failed; retrying", metadata: ["error": "\(String(cString: strerror(errno)))"])
                usleep(500_000)
                continue
            }
            guard ready > 0 else { continue }
            // The clients polled this time; one accepted below waits for the next poll.
            let polled = clients.count
            var offset = 0
            if accepting {
                offset = 1
                if descriptors[0].revents != 0 {
                    do {
                        if let client = try socket.accept(milliseconds: 0) {
                            client.setTimeouts(seconds: 2)
                            client.setNonBlocking(true)
                            clients.append(Client(socket: client, deadline: now + Self.requestDeadlineMilliseconds))
                        }
                    } catch {
                        logger.error("control socket: accept failed", metadata: ["error": "\(error)"])
                    }
                }
            }
            var done: [Int] = []
            for index in 0..<polled where descriptors[offset + index].revents != 0 {
                switch clients[index].socket.readAvailable(
                    into: &clients[index].received, limit: ControlRequest.maximumBytes)
                {
                case .more:
                    if let newline = clients[index].received.firstIndex(of: UInt8(ascii: "\n")) {
                        finish(clients[index], line: Array(clients[index].received[..<newline]))
                        done.append(index)
                    } else if clients[index].received.count >= ControlRequest.maximumBytes {
                        finish(clients[index], line: nil)
                        done.append(index)
                    }
                case .closed:
                    // A request without its newline is still a request; an empty one gets the reason.
                    let received = clients[index].received
                    finish(clients[index], line: received.isEmpty ? nil : received)
                    done.append(index)
                case .failed:
                    done.append(index)
                }
            }
            for index in done.reversed() { clients.remove(at: index) }
        }
    }

    /// Answers one client (blocking, with the socket's 2 s send timeout) and lets it go.
    private func finish(_ client: Client, line: [UInt8]?) {
        let response =
            line.map { answer($0, from: client.socket) }
            ?? ControlResponse(
                ok: false,
                error:
                    "no request line within \(ControlRequest.maximumBytes) bytes and \(Self.requestDeadlineMilliseconds / 1_000) s"
            )
        client.socket.setNonBlocking(false)
        try? client.socket.writeAll(response.line)
    }

    private func answer(_ line: [UInt8], from client: UnixSocket) -> ControlResponse {
        guard let request = try? JSONDecoder().decode(ControlRequest.self, from: Data(line)) else {
            return ControlResponse(ok: false, error: #"a request is one JSON object such as {"request":"status"}"#)
        }
        switch request.request {
        case "status":
            return ControlResponse(ok: true, status: status())
        case "refresh", "retry-dead-letters":
            guard let peer = client.peer,
                Self.mayRefresh(uid: peer.uid, gid: peer.gid, groups: client.peerGroups, socketGroup: socketGroup)
            else {
                return ControlResponse(ok: false, error: "\(request.request) is for root and the daemon's group")
            }
            if request.request == "retry-dead-letters" {
                switch retryDeadLetters() {
                case .success(let count):
                    logger.notice(
                        "dead letters queued again",
                        metadata: ["outbox.requeued": "\(count)", "peer.uid": "\(peer.uid)"])
                    return ControlResponse(
                        ok: true, message: "\(count) dead letter\(count == 1 ? "" : "s") queued again")
                case .failure(let error):
                    return ControlResponse(ok: false, error: "\(error)")
                }
            }
            refresh()
            logger.info(
                "missing-set refresh requested over the control socket",
                metadata: ["peer.uid": "\(client.peer?.uid ?? 0)"])
            return ControlResponse(ok: true, message: "refresh requested")
        default:
            return ControlResponse(
                ok: false,
                error: "unknown request \"\(request.request)\"; known: \(ControlRequest.known.joined(separator: ", "))")
        }
    }

    private var socketGroup: gid_t {
        var information = stat()
        return stat(path, &information) == 0 ? information.st_gid : getegid()
    }

    /// Root, the daemon's own user, or a process in the socket's group, as its primary group or one of the
    /// supplementary groups the kernel says it has (not /etc/group's list, which a process may not match).
    static func mayRefresh(uid: uid_t, gid: gid_t, groups: [gid_t], socketGroup: gid_t) -> Bool {
        uid == 0 || uid == geteuid() || gid == socketGroup || groups.contains(socketGroup)
    }
}
