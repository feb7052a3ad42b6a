import BeaconCapture
import Foundation

/// A Bluetooth controller at the far end of a socketpair, speaking H4 bytes as a raw HCI socket does: it
/// answers each command with Command Complete (its status chosen by the test), records every command it was
/// sent, and can send LE advertising report events of its own.
final class FakeController: Sendable {
    /// The adapter side, for the code under test.
    let socket: HCISocket
    private let peer: SocketPairPeer
    private let log = PacketLog()

    /// `statuses`: status to answer for an opcode (default 0, success); `firstStatuses`: for the first command
    /// with an opcode only; `silent` opcodes get no answer at all; `reportOnScanEnable` is sent after answering
    /// each scan enable, as btvirt does (one report per enable edge).
    init(
        extended: Bool, statuses: [UInt16: UInt8] = [:], firstStatuses: [UInt16: UInt8] = [:], silent: Set<UInt16> = [],
        reportOnScanEnable: [UInt8]? = nil
    ) {
        let log = log
        peer = SocketPairPeer { packet, far in
            guard packet.count >= 4, packet[0] == 0x01 else { return }
            log.append(packet)
            let opcode = UInt16(packet[1]) | UInt16(packet[2]) << 8
            guard !silent.contains(opcode) else { return }
            let first = log.all.filter { UInt16($0[1]) | UInt16($0[2]) << 8 == opcode }.count == 1
            var parameters: [UInt8] = [(first ? firstStatuses[opcode] : nil) ?? statuses[opcode] ?? 0]
            if opcode == 0x2003 { parameters += [0x00, extended ? 0x10 : 0x00, 0, 0, 0, 0, 0, 0] }
            far.send([0x04, 0x0E, UInt8(3 + parameters.count), 0x01, packet[1], packet[2]] + parameters)
            if let report = reportOnScanEnable, opcode == 0x200C || opcode == 0x2042, packet[4] == 1 {
                far.send(report)
            }
        }
        socket = HCISocket(descriptor: peer.near, deviceID: 7)
    }

    /// The commands received so far, each as its full H4 packet.
    var commands: [[UInt8]] { log.all }
    var opcodes: [UInt16] { commands.map { UInt16($0[1]) | UInt16($0[2]) << 8 } }

    /// The controller goes away (a dongle pulled out): the adapter side reads end-of-file.
    func hangUp() { peer.hangUp() }

    /// Sends an H4 packet to the adapter side.
    func send(_ packet: [UInt8]) { peer.send(packet) }
}
