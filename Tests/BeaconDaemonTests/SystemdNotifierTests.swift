import BeaconDaemon
import DaemonSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The notifier talks to a real AF_UNIX datagram socket, as systemd's notify socket is.
@Suite(.timeLimit(.minutes(20))) struct SystemdNotifierTests {
    /// A bound datagram socket in a fresh directory; nobody reads it unless the test does.
    final class Listener {
        let path: String
        let fd: Int32

        init() throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "notify-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            path = directory.appendingPathComponent("notify.sock").path
            fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { buffer in
                for (index, byte) in path.utf8.enumerated() { buffer[index] = byte }
            }
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            #expect(bound == 0)
        }

        func receive() -> String? {
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            return count > 0 ? String(decoding: buffer[..<count], as: UTF8.self) : nil
        }

        deinit {
            close(fd)
            try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent)
        }
    }

    @Test func sendsFieldsAsOneDatagram() throws {
        let listener = try Listener()
        let notifier = try #require(SystemdNotifier(environment: ["NOTIFY_SOCKET": listener.path]))
        #expect(notifier.notify(["READY=1", "STATUS=capturing\nfrom hci0"]))
        #expect(listener.receive() == "READY=1\nSTATUS=capturing from hci0")
    }

    /// A manager that stops reading must not stall the daemon: once the socket's queue is full, sends fail
    /// at once instead of waiting (found when a benchmark harness stopped reading after READY=1 and the
    /// engine stood still behind a blocked health ping).
    @Test func aReaderThatStopsReadingNeverBlocksTheSender() throws {
        let listener = try Listener()
        let notifier = try #require(SystemdNotifier(environment: ["NOTIFY_SOCKET": listener.path]))
        let start = ContinuousClock.now
        var refused = 0
        for _ in 0..<5_000 where !notifier.notify(["WATCHDOG=1", "STATUS=" + String(repeating: "x", count: 200)]) {
            refused += 1
        }
        #expect(refused > 0, "the queue never filled, so the test proved nothing")
        #expect(ContinuousClock.now - start < .seconds(10))
        #expect(listener.receive()?.hasPrefix("WATCHDOG=1") == true)
    }
}
