import BeaconTestSupport
import Foundation

/// A `beacond` process started in the background, as systemd would: its output goes to files, it can be
/// signalled, and its exit is awaited with a deadline.
final class DaemonProcess {
    let process = Process()
    let stdoutPath: String
    let stderrPath: String

    init(_ arguments: [String], environment: [String: String] = [:], logDirectory: String, name: String) throws {
        stdoutPath = "\(logDirectory)/\(name).out"
        stderrPath = "\(logDirectory)/\(name).err"
        _ = FileManager.default.createFile(atPath: stdoutPath, contents: nil)
        _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
        process.executableURL = BeacondRun.binary
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = FileHandle(forWritingAtPath: stdoutPath)
        process.standardError = FileHandle(forWritingAtPath: stderrPath)
        try process.run()
    }

    var stderr: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    func terminate() { process.terminate() }

    /// The exit status, or nil when it did not exit within `seconds` (it is then killed).
    func waitForExit(seconds: Double) async -> Int32? {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        guard !process.isRunning else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return nil
        }
        process.waitUntilExit()  // lets Foundation finish with the child, so the Process can be freed
        return process.terminationStatus
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}

/// The receiving end of `$NOTIFY_SOCKET`: a Unix datagram socket collecting what the daemon tells systemd.
///
/// It reads all the time, as systemd does. A socket read only at the end fills up (Linux queues 10 datagrams
/// for an unread Unix socket), and the daemon, which never blocks on it, then drops what it sends next: on a
/// slow CI run the watchdog pings filled it and STOPPING=1 was lost.
final class NotifyListener {
    let path: String
    private let inbox: Inbox

    init(path: String) throws {
        self.path = path
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
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
    func receive() -> [[String]] {
        usleep(100_000)
        return inbox.take()
    }

    /// The socket and what came through it, shared with the thread that reads it.
    private final class Inbox: @unchecked Sendable {
        private let descriptor: Int32
        private let lock = NSLock()
        private var messages: [[String]] = []
        private var stopping = false
        private let finished = DispatchSemaphore(value: 0)

        init(descriptor: Int32) { self.descriptor = descriptor }

        func read() {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !lock.withLock({ stopping }) {
                let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { continue }  // the 100 ms timeout, or an interrupted read
                let message = String(decoding: buffer[..<count], as: UTF8.self).split(separator: "\n").map(String.init)
                lock.withLock { messages.append(message) }
            }
            finished.signal()
        }

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
