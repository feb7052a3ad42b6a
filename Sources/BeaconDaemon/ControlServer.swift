#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
public import Logging
public import ServiceLifecycle

/// The control socket: a Unix stream socket in the runtime directory, mode 0660, so the daemon's user and
/// group (and root) may connect and nobody else. `status` is for anyone who can connect; `refresh` is checked
/// again against the kernel's word on who the peer is (SO_PEERCRED): root, the daemon's user, or a member of
/// the socket's group.
///
/// One connection at a time on a thread of its own, each with a two-second deadline, so a client that
/// connects and says nothing cannot hold the daemon up; requests are tiny and answers quick.
public final class ControlServer: Service {
    public let path: String
    private let socket: UnixSocket
    private let status: @Sendable () -> StatusReport
    private let refresh: @Sendable () -> Void
    private let logger: Logger
    private let thread = CaptureThread()

    /// Binds now, so a socket that cannot be made stops the daemon before it starts, with the reason.
    public init(
        path: String, status: @escaping @Sendable () -> StatusReport, refresh: @escaping @Sendable () -> Void, logger: Logger
    ) throws {
        self.path = path
        self.socket = try UnixSocket.listen(path: path, mode: 0o660)
        self.status = status
        self.refresh = refresh
        self.logger = logger
    }

    public func run() async throws {
        thread.start(name: "beacond-control") { [self] in serve() }
        try? await gracefulShutdown()
        thread.stop()
        await thread.waitUntilStopped()
        unlink(path)
    }

    private func serve() {
        while !thread.stopRequested {
            do {
                guard let client = try socket.accept(milliseconds: 200) else { continue }
                client.setTimeouts(seconds: 2)
                let response = answer(client)
                try? client.writeAll(response.line)
            } catch {
                logger.error("control socket failed; retrying", metadata: ["error": "\(error)"])
                usleep(500_000)
            }
        }
    }

    private func answer(_ client: UnixSocket) -> ControlResponse {
        guard let line = client.readLine(limit: ControlRequest.maximumBytes) else {
            return ControlResponse(ok: false, error: "no request line within \(ControlRequest.maximumBytes) bytes and 2 s")
        }
        guard let request = try? JSONDecoder().decode(ControlRequest.self, from: Data(line)) else {
            return ControlResponse(ok: false, error: #"a request is one JSON object such as {"request":"status"}"#)
        }
        switch request.request {
        case "status":
            return ControlResponse(ok: true, status: status())
        case "refresh":
            guard let peer = client.peer, Self.mayRefresh(uid: peer.uid, gid: peer.gid, socketGroup: socketGroup) else {
                return ControlResponse(ok: false, error: "refresh is for root and the daemon's group")
            }
            refresh()
            logger.info("missing-set refresh requested over the control socket", metadata: ["peer.uid": "\(client.peer?.uid ?? 0)"])
            return ControlResponse(ok: true, message: "refresh requested")
        default:
            return ControlResponse(
                ok: false, error: "unknown request \"\(request.request)\"; known: \(ControlRequest.known.joined(separator: ", "))")
        }
    }

    private var socketGroup: gid_t {
        var information = stat()
        return stat(path, &information) == 0 ? information.st_gid : getegid()
    }

    static func mayRefresh(uid: uid_t, gid: gid_t, socketGroup: gid_t) -> Bool {
        if uid == 0 || uid == geteuid() || gid == socketGroup { return true }
        // Supplementary groups: the peer's user may be in the socket's group without it being primary.
        guard let user = getpwuid(uid) else { return false }
        var count: Int32 = 64
        var groups = [gid_t](repeating: 0, count: Int(count))
        guard getgrouplist(user.pointee.pw_name, gid, &groups, &count) >= 0 else { return false }
        return groups.prefix(Int(count)).contains(socketGroup)
    }
}
