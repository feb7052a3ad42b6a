import Synchronization

#if canImport(Glibc)
public import Glibc
#endif

/// The few Unix-socket calls a local server and its clients need, each retrying on EINTR and throwing the errno
/// with what was being done and where.
public struct SocketError: Error, CustomStringConvertible {
    public var operation: String
    public var path: String
    public var errno: Int32

    public init(operation: String, path: String, errno: Int32) {
        self.operation = operation
        self.path = path
        self.errno = errno
    }

    public var description: String { "\(operation) \(path): \(String(cString: strerror(errno)))" }
}

/// An open socket descriptor, closed exactly once: by this, or by the owner it was released to.
public final class UnixSocket: Sendable {
    public let descriptor: Int32
    /// The socket file it was bound or connected to (for an accepted connection, its listener's), for errors.
    public let path: String
    private let owned = Atomic<Bool>(true)

    public init(descriptor: Int32, path: String = "a unix socket") {
        self.descriptor = descriptor
        self.path = path
    }

    deinit { if owned.load(ordering: .acquiring) { close(descriptor) } }

    /// The descriptor, for a new owner (an event loop's channel) that closes it; this no longer will.
    public func release() -> Int32 {
        owned.store(false, ordering: .releasing)
        return descriptor
    }

    /// A listening stream socket at `path` (a stale socket file left by a crash is replaced), with `mode`.
    public static func listen(path: String, mode: mode_t) throws(SocketError) -> UnixSocket {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SocketError(operation: "socket", path: path, errno: errno) }
        let socket = UnixSocket(descriptor: fd, path: path)
        if unlink(path) != 0, errno != ENOENT { throw SocketError(operation: "remove stale", path: path, errno: errno) }
        // Created with no access for others, then opened to the group: never a moment with a wider mode.
        let oldMask = umask(0o177)
        let bound = UnixAddress.with(path) { bind(fd, $0, $1) }
        umask(oldMask)
        guard bound == 0 else { throw SocketError(operation: "bind", path: path, errno: errno) }
        guard chmod(path, mode) == 0 else { throw SocketError(operation: "chmod", path: path, errno: errno) }
        guard Glibc.listen(fd, 16) == 0 else { throw SocketError(operation: "listen", path: path, errno: errno) }
        return socket
    }

    /// A connected stream socket to `path`, with send and receive timeouts.
    public static func connect(path: String, timeoutSeconds: Int) throws(SocketError) -> UnixSocket {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SocketError(operation: "socket", path: path, errno: errno) }
        let socket = UnixSocket(descriptor: fd, path: path)
        socket.setTimeouts(seconds: timeoutSeconds)
        let result = retryingOnInterrupt { UnixAddress.with(path) { Glibc.connect(fd, $0, $1) } }
        guard result == 0 else { throw SocketError(operation: "connect", path: path, errno: errno) }
        return socket
    }

    /// Waits up to `milliseconds` for a connection; nil when none came.
    public func accept(milliseconds: Int32) throws(SocketError) -> UnixSocket? {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let ready = interruptIsNothing { poll(&poller, 1, milliseconds) }
        if ready < 0 { throw SocketError(operation: "poll", path: path, errno: errno) }
        guard ready > 0 else { return nil }
        let client = retryingOnInterrupt { Glibc.accept(descriptor, nil, nil) }
        guard client >= 0 else {
            // The client may have gone already; that is its problem, not the server's.
            if [EAGAIN, ECONNABORTED, EPROTO].contains(errno) { return nil }
            throw SocketError(operation: "accept", path: path, errno: errno)
        }
        _ = fcntl(client, F_SETFD, FD_CLOEXEC)
        return UnixSocket(descriptor: client, path: path)
    }

    public func setTimeouts(seconds: Int) {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Who is at the other end (SO_PEERCRED): the kernel's word, not the client's.
    public var peer: (uid: uid_t, gid: gid_t)? {
        // struct ucred (pid, uid, gid: three 32-bit fields); Glibc hides its name behind _GNU_SOURCE.
        var credentials = (pid: Int32(0), uid: uid_t(0), gid: gid_t(0))
        var length = socklen_t(MemoryLayout.size(ofValue: credentials))
        guard getsockopt(descriptor, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0 else { return nil }
        return (credentials.uid, credentials.gid)
    }

    /// The peer's supplementary groups (SO_PEERGROUPS, Linux 4.13): what the kernel says the connecting process
    /// has, whatever /etc/group lists. Empty when the kernel cannot say.
    public var peerGroups: [gid_t] {
        let peerGroupsOption: Int32 = 59  // SO_PEERGROUPS, <asm-generic/socket.h>; Glibc's module does not name it
        var groups = [gid_t](repeating: 0, count: 64)
        var length = socklen_t(groups.count * MemoryLayout<gid_t>.size)
        var result = groups.withUnsafeMutableBytes {
            getsockopt(descriptor, SOL_SOCKET, peerGroupsOption, $0.baseAddress, &length)
        }
        if result != 0, errno == ERANGE {
            // More than 64 groups: the kernel said how much room it needs.
            groups = [gid_t](repeating: 0, count: Int(length) / MemoryLayout<gid_t>.size)
            result = groups.withUnsafeMutableBytes {
                getsockopt(descriptor, SOL_SOCKET, peerGroupsOption, $0.baseAddress, &length)
            }
        }
        guard result == 0 else { return [] }
        return Array(groups.prefix(Int(length) / MemoryLayout<gid_t>.size))
    }

    public func setNonBlocking(_ nonBlocking: Bool) {
        let flags = fcntl(descriptor, F_GETFL)
        guard flags >= 0 else { return }
        _ = fcntl(descriptor, F_SETFL, nonBlocking ? flags | O_NONBLOCK : flags & ~O_NONBLOCK)
    }

    public enum ReadOutcome { case more, closed, failed }

    /// Reads what is waiting (the socket is non-blocking) onto `bytes`, up to `limit` in all.
    public func readAvailable(into bytes: inout [UInt8], limit: Int) -> ReadOutcome {
        var chunk = [UInt8](repeating: 0, count: 1024)
        while bytes.count < limit {
            let count = retryingOnInterrupt {
                chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, min($0.count, limit - bytes.count)) }
            }
            if count < 0 {
                return errno == EAGAIN || errno == EWOULDBLOCK ? .more : .failed
            }
            if count == 0 { return .closed }
            bytes += chunk[..<count]
        }
        return .more
    }

    /// Reads everything until the peer closes, up to `limit` bytes.
    public func readAll(limit: Int) throws(SocketError) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while bytes.count < limit {
            let count = retryingOnInterrupt {
                chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            }
            guard count >= 0 else { throw SocketError(operation: "read from", path: path, errno: errno) }
            if count == 0 { break }
            bytes += chunk[..<count]
        }
        return bytes
    }

    public func writeAll(_ bytes: [UInt8]) throws(SocketError) {
        var offset = 0
        while offset < bytes.count {
            let count = retryingOnInterrupt {
                bytes.withUnsafeBytes {
                    send(descriptor, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL))
                }
            }
            guard count > 0 else { throw SocketError(operation: "write to", path: path, errno: errno) }
            offset += count
        }
    }
}
