@testable import BeaconCapture
import Foundation
import Synchronization

/// The kernel's management channel at the far end of a socketpair, speaking mgmt bytes: records each
/// command and answers Command Complete with the status the test chose (and current settings 0).
final class FakeManagement: @unchecked Sendable {
    private let near: Int32
    private let far: Int32
    private let log = Mutex<[[UInt8]]>([])
    private let status: UInt8
    private let stop = Atomic<Bool>(false)
    private let finished = Atomic<Bool>(false)

    init(status: UInt8 = 0) {
        var pair: [Int32] = [0, 0]
        precondition(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &pair) == 0)
        near = pair[0]
        far = pair[1]
        self.status = status
        Thread { [self] in serve() }.start()
    }

    deinit {
        stop.store(true, ordering: .relaxed)
        while !finished.load(ordering: .acquiring) { usleep(1_000) }
        close(near)
        close(far)
    }

    /// A management socket for the code under test (each one a duplicate of the same channel).
    func open() -> MgmtSocket { MgmtSocket(descriptor: dup(near)) }

    var commands: [[UInt8]] { log.withLock { $0 } }

    private func serve() {
        defer { finished.store(true, ordering: .releasing) }
        var buffer = [UInt8](repeating: 0, count: 300)
        while !stop.load(ordering: .relaxed) {
            var poller = pollfd(fd: far, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 20) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { read(far, $0.baseAddress, $0.count) }
            guard count >= 6 else { continue }
            let command = Array(buffer[..<count])
            log.withLock { $0.append(command) }
            // Command Complete: event 0x0001, the command's index, length 7: opcode, status, settings (u32).
            let reply: [UInt8] = [0x01, 0x00, command[2], command[3], 0x07, 0x00, command[0], command[1], status, 0, 0, 0, 0]
            _ = reply.withUnsafeBytes { write(far, $0.baseAddress, $0.count) }
        }
    }
}
