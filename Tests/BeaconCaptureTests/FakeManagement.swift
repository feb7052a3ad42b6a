import Foundation

@testable import BeaconCapture

/// The kernel's management channel at the far end of a socketpair, speaking mgmt bytes: records each
/// command and answers Command Complete with the status the test chose (and current settings 0).
final class FakeManagement: Sendable {
    private let peer: SocketPairPeer
    private let log = PacketLog()

    init(status: UInt8 = 0) {
        let log = log
        peer = SocketPairPeer { command, far in
            guard command.count >= 6 else { return }
            log.append(command)
            // Command Complete: event 0x0001, the command's index, length 7: opcode, status, settings (u32).
            far.send([0x01, 0x00, command[2], command[3], 0x07, 0x00, command[0], command[1], status, 0, 0, 0, 0])
        }
    }

    deinit { close(peer.near) }

    /// A management socket for the code under test (each one a duplicate of the same channel).
    func open() -> MgmtSocket { MgmtSocket(descriptor: dup(peer.near)) }

    var commands: [[UInt8]] { log.all }
}
