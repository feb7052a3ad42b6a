import Foundation
import LockedValue

#if canImport(Glibc)
import Glibc
#endif

/// TCP ports on 127.0.0.1, for servers the tests start as processes of their own.
public enum LoopbackPort {
    /// A port free now, for a server to listen on: chosen at random below the kernel's ephemeral range (32768 and up,
    /// /proc/sys/net/ipv4/ip_local_port_range), from which the kernel takes the source port of every outgoing
    /// connection and the port of every server bound to port 0. One the kernel chose, as this once took, could be
    /// taken by the suite's own connections between this check and the server's bind (CI: mosquitto's "Address
    /// already in use"). Never the same port twice in one test process.
    public static func free() throws -> Int {
        for _ in 0..<500 {
            let port = Int.random(in: 20_000..<32_768)
            guard given.withLock({ $0.insert(port).inserted }) else { continue }
            if bindable(port) { return port }
        }
        throw FixtureError("no free port on 127.0.0.1 between 20000 and 32767")
    }

    private static let given = LockedValue<Set<Int>>([])

    /// Whether a server could listen on `port` now (with SO_REUSEADDR, as servers do, so that a connection of an
    /// earlier test still in TIME_WAIT does not count).
    private static func bindable(_ port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var reuse: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        var address = loopback(port: port)
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    /// A socket bound to a port the kernel chose and never listened on, and the port: a connection to it is refused, and
    /// no server can take the port while the socket (the caller's to close) is open.
    public static func refusing() throws -> (descriptor: Int32, port: Int) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0
            }
        }
        guard bound else {
            let error = errno
            close(descriptor)
            throw FixtureError("cannot bind a loopback port: errno \(error)")
        }
        return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// Whether something accepts connections on `port`.
    public static func accepts(_ port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = loopback(port: port)
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}
