import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The receiving end of `$NOTIFY_SOCKET`: a Unix datagram socket collecting what the daemon tells systemd.
///
/// It reads all the time, as systemd does. A socket read only at the end fills up (Linux queues 10 datagrams
/// for an unread Unix socket), and the daemon, which never blocks on it, then drops what it sends next: on a
/// slow CI run the watchdog pings filled it and STOPPING=1 was lost.
public final class NotifyListener {
    public let path: String
    private let inbox: Inbox

    public init(path: String) throws {
        self.path = path
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0 else {
            close(descriptor)
            throw FixtureError("cannot bind \(path): errno \(errno)")
        }
        // The reader wakes at least every 100 ms to see whether it should stop.
        var timeout = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        inbox = Inbox(descriptor: descriptor)
        let inbox = self.inbox
        Thread { inbox.read() }.start()
    }

    deinit { inbox.stop() }

    /// Every message received since the last call (each a list of `KEY=value` fields), after waiting 100 ms for
    /// any still on their way.
    public func receive() -> [[String]] {
        usleep(100_000)
        return inbox.take()
    }

    /// Every message received so far, in order (`receive` empties its own list, not this one).
    public var all: [[String]] { inbox.all() }

    /// Waits up to `seconds` for a message that `matches`, and returns its index in `all`: as soon as it comes.
    public func firstIndex(within seconds: Double, where matches: ([String]) -> Bool) async -> Int? {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1_000))
        while true {
            if let index = all.firstIndex(where: matches) { return index }
            guard ContinuousClock.now < deadline else { return nil }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    /// The socket and what came through it, shared with the thread that reads it.
    private final class Inbox: @unchecked Sendable {
        private let descriptor: Int32
        private let lock = NSLock()
        private var messages: [[String]] = []
        private var everything: [[String]] = []
        private var stopping = false
        private let finished = DispatchSemaphore(value: 0)

        init(descriptor: Int32) { self.descriptor = descriptor }

        func read() {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !lock.withLock({ stopping }) {
                let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { continue }  // the 100 ms timeout, or an interrupted read
                let message = String(decoding: buffer[..<count], as: UTF8.self).split(separator: "\n").map(String.init)
                lock.withLock {
                    messages.append(message)
                    everything.append(message)
                }
            }
            finished.signal()
        }

        func all() -> [[String]] { lock.withLock { everything } }

        func take() -> [[String]] {
            lock.withLock {
                defer { messages = [] }
                return messages
            }
        }

        func stop() {
            lock.withLock { stopping = true }
            finished.wait()
            close(descriptor)
        }
    }
}
