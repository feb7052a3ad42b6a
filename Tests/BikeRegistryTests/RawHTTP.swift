import BeaconTestSupport
import Foundation

/// Requests written by hand to a server on loopback, and everything it answers until it closes.
enum RawHTTP {
    /// On a thread of its own: a blocking read on one of Swift's two pool threads here would stall the servers under
    /// test, which answer on that pool.
    static func exchange(port: Int, _ text: String) async throws -> String {
        try await onThread {
            let descriptor = try connected(port: port)
            defer { close(descriptor) }
            let bytes = Array(text.utf8)
            guard bytes.withUnsafeBytes({ write(descriptor, $0.baseAddress, $0.count) }) == bytes.count else {
                throw HarnessError("cannot write the requests")
            }
            return String(decoding: try readToEnd(descriptor), as: UTF8.self)
        }
    }

    /// Sends `request` again and again, reading nothing, until the sends stall for 2 s or `limit` bytes are sent;
    /// then reads and counts the answers until there is one for each whole request sent, or none comes for 5 s. The
    /// client's receive buffer is kept small, so that what waits unread is the server's.
    static func sendWithoutReading(port: Int, request: [UInt8], upTo limit: Int) async throws -> (Int, Int) {
        try await onThread {
            let descriptor = try connected(port: port, receiveBuffer: 4_096)
            defer { close(descriptor) }
            let batch = Array([[UInt8]](repeating: request, count: 64).joined())
            var sent = 0
            var stalledSince: Date?
            while sent < limit {
                // From where the last send stopped in the batch, so that the stream is whole requests, one after another.
                let offset = sent % batch.count
                let count = batch.withUnsafeBytes {
                    send(descriptor, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_DONTWAIT))
                }
                if count > 0 {
                    sent += count
                    stalledSince = nil
                    continue
                }
                guard errno == EAGAIN || errno == EWOULDBLOCK else {
                    throw HarnessError("send failed (errno \(errno))")
                }
                if let since = stalledSince, Date().timeIntervalSince(since) > 2 { break }
                stalledSince = stalledSince ?? Date()
                Thread.sleep(forTimeInterval: 0.01)
            }
            // What was sent ends on a whole request only if the last send did; the answers count whole ones.
            let expected = sent / request.count
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            let marker = Array("HTTP/1.1 304".utf8)
            var answers: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65_536)
            var count = 0
            while count < expected {
                let read = recv(descriptor, &buffer, buffer.count, 0)
                guard read > 0 else { break }
                answers += buffer[..<read]
                // Counted, and dropped up to where a status line could still begin in the next read.
                var index = 0
                while index + marker.count <= answers.count {
                    if answers[index..<index + marker.count].elementsEqual(marker) {
                        count += 1
                        index += marker.count
                    } else {
                        index += 1
                    }
                }
                answers.removeFirst(index)
            }
            return (sent, count)
        }
    }

    static func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body() }) }.start()
        }
    }

    static func connected(port: Int, receiveBuffer: Int32? = nil) throws -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if var size = receiveBuffer {
            setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            close(descriptor)
            throw HarnessError("cannot connect to port \(port)")
        }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return descriptor
    }

    static func readToEnd(_ descriptor: Int32) throws -> [UInt8] {
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = read(descriptor, &buffer, buffer.count)
            guard count > 0 else {
                if count < 0 { throw HarnessError("no answer within 30 s (errno \(errno))") }
                return answer
            }
            answer += buffer[..<count]
        }
    }
}
