import Logging

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
public import Glibc
#endif

/// Who is at the other end of a control connection, in the kernel's words (SO_PEERCRED, SO_PEERGROUPS), read when
/// it was accepted: never what the client says of itself.
public struct ControlPeer: Sendable, Equatable {
    public var uid: uid_t
    public var gid: gid_t
    /// Its supplementary groups, as the kernel lists them (not /etc/group's list, which a process may not match).
    public var groups: [gid_t]

    public init(uid: uid_t, gid: gid_t, groups: [gid_t]) {
        self.uid = uid
        self.gid = gid
        self.groups = groups
    }
}

/// What each request line gets: `status` for anyone who could connect; `refresh` and `retry-dead-letters` for root,
/// the daemon's user, or a member of the socket's group.
struct ControlAnswers: Sendable {
    let status: @Sendable () -> StatusReport
    let refresh: @Sendable () -> Void
    /// Puts the dead letters back in the queue; how many, or why not.
    let retryDeadLetters: @Sendable () -> Result<Int, any Error>
    /// The group the socket file has now (an operator may have changed it since it was made).
    let socketGroup: @Sendable () -> gid_t
    let logger: Logger

    func answer(_ line: [UInt8], from peer: ControlPeer?) -> ControlResponse {
        guard let request = try? JSONDecoder().decode(ControlRequest.self, from: Data(line)) else {
            return ControlResponse(ok: false, error: #"a request is one JSON object such as {"request":"status"}"#)
        }
        switch request.request {
        case "status":
            return ControlResponse(ok: true, status: status())
        case "refresh", "retry-dead-letters":
            guard let peer, Self.mayRefresh(peer, socketGroup: socketGroup()) else {
                return ControlResponse(ok: false, error: "\(request.request) is for root and the daemon's group")
            }
            return request.request == "refresh" ? refreshed(by: peer) : requeued(by: peer)
        default:
            return ControlResponse(
                ok: false,
                error: "unknown request \"\(request.request)\"; known: \(ControlRequest.known.joined(separator: ", "))")
        }
    }

    private func refreshed(by peer: ControlPeer) -> ControlResponse {
        refresh()
        logger.info("missing-set refresh requested over the control socket", metadata: ["peer.uid": "\(peer.uid)"])
        return ControlResponse(ok: true, message: "refresh requested")
    }

    private func requeued(by peer: ControlPeer) -> ControlResponse {
        switch retryDeadLetters() {
        case .success(let count):
            logger.notice(
                "dead letters queued again", metadata: ["outbox.requeued": "\(count)", "peer.uid": "\(peer.uid)"])
            return ControlResponse(ok: true, message: "\(count) dead letter\(count == 1 ? "" : "s") queued again")
        case .failure(let error):
            return ControlResponse(ok: false, error: "\(error)")
        }
    }

    /// Root, the daemon's own user, or a process in the socket's group, as its primary group or one of the
    /// supplementary groups the kernel says it has.
    static func mayRefresh(_ peer: ControlPeer, socketGroup: gid_t) -> Bool {
        peer.uid == 0 || peer.uid == geteuid() || peer.gid == socketGroup || peer.groups.contains(socketGroup)
    }
}
