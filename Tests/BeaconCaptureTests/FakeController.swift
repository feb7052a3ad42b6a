import BeaconCapture
import Foundation
import Synchronization

/// A Bluetooth controller at the far end of a SOCK_SEQPACKET socketpair, speaking H4 bytes as a raw HCI
/// socket does: it answers each command with Command Complete (its status chosen by the test), records every
/// command it was sent, and can send LE advertising report events of its own.
final class FakeController: @unchecked Sendable {
    /// The adapter side, for the code under test.
    let socket: HCISocket
    private let far: Int32
    private let log = Mutex<[[UInt8]]>([])
    private let extended: Bool
    /// Status to answer for an opcode (default 0, success); `silent` opcodes get no answer at all.
    private let statuses: [UInt16: UInt8]
    private let silent: Set<UInt16>
    /// Status for the first command with an opcode only (later ones succeed).
    private let firstStatuses: [UInt16: UInt8]
    /// Sent after answering each scan enable, as btvirt does: one report per enable edge.
    private let reportOnScanEnable: [UInt8]?
    private let stop = Atomic<Bool>(false)
    private let finished = Atomic<Bool>(false)

    init(
        extended: Bool, statuses: [UInt16: UInt8] = [:], firstStatuses: [UInt16: UInt8] = [:], silent: Set<UInt16> = [],
        reportOnScanEnable: [UInt8]? = nil
    ) {
        var pair: [Int32] = [0, 0]
        precondition(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &pair) == 0)
        socket = HCISocket(descriptor: pair[0], deviceID: 7)
        far = pair[1]
        self.extended = extended
        self.statuses = statuses
        self.silent = silent
        self.firstStatuses = firstStatuses
        self.reportOnScanEnable = reportOnScanEnable
        let thread = Thread { [self] in serve() }
        thread.start()
    }

    deinit {
        stop.store(true, ordering: .relaxed)
        while !finished.load(ordering: .acquiring) { usleep(1_000) }
        close(far)
    }

    /// The commands received so far, each as its full H4 packet.
    var commands: [[UInt8]] { log.withLock { $0 } }
    var opcodes: [UInt16] { commands.map { UInt16($0[1]) | UInt16($0[2]) << 8 } }

    /// The controller goes away (a dongle pulled out): the adapter side reads end-of-file.
    func hangUp() { shutdown(far, Int32(SHUT_RDWR)) }

    /// Sends an H4 packet to the adapter side.
    func send(_ packet: [UInt8]) {
        _ = packet.withUnsafeBytes { write(far, $0.baseAddress, $0.count) }
    }

    private func serve() {
        defer { finished.store(true, ordering: .releasing) }
        var buffer = [UInt8](repeating: 0, count: 300)
        while !stop.load(ordering: .relaxed) {
            var poller = pollfd(fd: far, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 20) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { read(far, $0.baseAddress, $0.count) }
            guard count > 0 else { return }  // hung up
            guard count >= 4, buffer[0] == 0x01 else { continue }
            let packet = Array(buffer[..<count])
            log.withLock { $0.append(packet) }
            let opcode = UInt16(packet[1]) | UInt16(packet[2]) << 8
            guard !silent.contains(opcode) else { continue }
            let first = log.withLock { $0.filter { UInt16($0[1]) | UInt16($0[2]) << 8 == opcode }.count == 1 }
            var parameters: [UInt8] = [(first ? firstStatuses[opcode] : nil) ?? statuses[opcode] ?? 0]
            if opcode == 0x2003 { parameters += [0x00, extended ? 0x10 : 0x00, 0, 0, 0, 0, 0, 0] }
            send([0x04, 0x0E, UInt8(3 + parameters.count), 0x01, packet[1], packet[2]] + parameters)
            if let report = reportOnScanEnable, opcode == 0x200C || opcode == 0x2042, packet[4] == 1 { send(report) }
        }
    }
}
