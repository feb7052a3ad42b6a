import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A TCP connection to a server on loopback, by hand: bytes exactly as written (a request line no HTTP client
/// would send, a head a byte at a time), from a chosen source address, and the moment the server closes it.
///
/// What waits for the server waits on a thread of its own, not on Swift's cooperative pool (a thread per core): a
/// test that blocked a pool thread in poll() while the server under test, in the same process, needed that thread
/// waited out its whole timeout for an answer the server could not give. Used by one test at a time.
final class RawConnection: @unchecked Sendable {
    let descriptor: Int32

    /// Connects to `port` on 127.0.0.1 (or ::1 when `source` is an IPv6 address), from `source` if given (any
    /// 127.x.y.z on Linux).
    init(port: Int, from source: String? = nil) throws {
        let v6 = source?.contains(":") == true
        descriptor = socket(v6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw HarnessError("socket: errno \(errno)") }
        if v6 {
            var local = Self.v6(source ?? "::1", 0)
            var remote = Self.v6("::1", port)
            guard Self.call(bind, descriptor, &local) == 0, Self.call(connect, descriptor, &remote) == 0 else {
                close(descriptor)
                throw HarnessError("cannot connect from \(source ?? "::1"): errno \(errno)")
            }
        } else {
            var remote = Self.v4("127.0.0.1", port)
            if let source {
                var local = Self.v4(source, 0)
                guard Self.call(bind, descriptor, &local) == 0 else {
                    close(descriptor)
                    throw HarnessError("cannot bind \(source): errno \(errno)")
                }
            }
            guard Self.call(connect, descriptor, &remote) == 0 else {
                close(descriptor)
                throw HarnessError("cannot connect: errno \(errno)")
            }
        }
    }

    deinit { close(descriptor) }

    func send(_ text: String) {
        _ = text.utf8CString.withUnsafeBufferPointer { write(descriptor, $0.baseAddress, $0.count - 1) }
    }

    /// The status of the answer, read until its head has come (nil if the connection closed first or `seconds`
    /// passed).
    func status(within seconds: Double = 10) async -> Int? { await head(within: seconds).status }

    /// The answer's head as text, and its status.
    func head(within seconds: Double = 10) async -> (status: Int?, text: String) {
        await offThePool { self.readHead(within: seconds) }
    }

    private func readHead(within seconds: Double) -> (status: Int?, text: String) {
        var received: [UInt8] = []
        let deadline = Date().addingTimeInterval(seconds)
        while !received.containsHeadEnd, Date() < deadline {
            guard let chunk = read(within: deadline.timeIntervalSinceNow), !chunk.isEmpty else { break }
            received += chunk
        }
        let text = String(decoding: received, as: UTF8.self)
        guard received.count > 12, received.starts(with: Array("HTTP/1.1 ".utf8)) else { return (nil, text) }
        return (Int(String(decoding: received[9..<12], as: UTF8.self)), text)
    }

    /// Whether the server closed the connection within `seconds` (what it sent before is read and dropped).
    func closed(within seconds: Double) async -> Bool {
        await offThePool { self.readUntilClosed(within: seconds) }
    }

    /// Sends `text` a character at a time, `every` seconds apart, until the server closes the connection: how long
    /// it took, or nil if it never did. One thread for the whole of it.
    func trickle(_ text: String, every seconds: Double) async -> Duration? {
        await offThePool {
            let started = ContinuousClock.now
            for character in text {
                self.send(String(character))
                if self.readUntilClosed(within: seconds) { return ContinuousClock.now - started }
            }
            return nil
        }
    }

    private func readUntilClosed(within seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            guard let chunk = read(within: deadline.timeIntervalSinceNow) else { return false }
            if chunk.isEmpty { return true }
        }
        return false
    }

    /// What arrived within `seconds`: empty when the connection was closed, nil when nothing came.
    private func read(within seconds: Double) -> [UInt8]? {
        var wanted = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&wanted, 1, Int32(max(0, seconds * 1000))) > 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = Glibc.read(descriptor, &buffer, buffer.count)
        return count <= 0 ? [] : Array(buffer[..<count])
    }

    private func offThePool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in Thread { continuation.resume(returning: body()) }.start() }
    }

    private static func v4(_ host: String, _ port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr(host)
        return address
    }

    private static func v6(_ host: String, _ port: Int) -> sockaddr_in6 {
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_port = in_port_t(UInt16(port).bigEndian)
        _ = inet_pton(AF_INET6, host, &address.sin6_addr)
        return address
    }

    private static func call<Address>(
        _ function: (Int32, UnsafePointer<sockaddr>, socklen_t) -> Int32, _ descriptor: Int32,
        _ address: inout Address
    ) -> Int32 {
        withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                function(descriptor, $0, socklen_t(MemoryLayout<Address>.size))
            }
        }
    }
}

extension [UInt8] {
    fileprivate var containsHeadEnd: Bool {
        count >= 4 && indices.dropLast(3).contains { self[$0...$0 + 3].elementsEqual([13, 10, 13, 10]) }
    }
}
