import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A listener on loopback that answers every connection with a TCP reset (SO_LINGER 0, then close) once the
/// request has arrived: the "connection reset by peer" a flaky café router produces, which an HTTP server
/// framework cannot be asked to do.
public final class ResetServer: @unchecked Sendable {
    public let port: Int
    private let listener: Int32
    private let thread: Thread

    public init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard bound == 0, listen(descriptor, 16) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        listener = descriptor
        thread = Thread {
            while true {
                let connection = accept(descriptor, nil, nil)
                if connection < 0 { return }  // the listener was closed
                var buffer = [UInt8](repeating: 0, count: 4096)
                _ = read(connection, &buffer, buffer.count)
                var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
                setsockopt(connection, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
                close(connection)
            }
        }
        thread.start()
    }

    public var baseURL: String { "http://127.0.0.1:\(port)" }

    public func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }
}
