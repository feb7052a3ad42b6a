import BeaconPOSIX
import BeaconWire
internal import CBlueZ

#if canImport(Glibc)
import Glibc
#endif

/// The kernel's Bluetooth management channel (HCI_CHANNEL_CONTROL), which bluetoothd itself uses to power
/// adapters. Sending commands needs CAP_NET_ADMIN.
final class MgmtSocket {
    private let descriptor: Int32

    /// Opens the control channel.
    init() throws(HCIError) {
        let fd = try HCISocket.openRaw("open the management channel for", name: "the adapters")
        if let error = HCISocket.bind(fd, device: UInt16(HCI_DEV_NONE), channel: UInt16(HCI_CHANNEL_CONTROL)) {
            close(fd)
            throw Self.failure(error, "open the management channel")
        }
        descriptor = fd
    }

    /// Wraps a descriptor that speaks mgmt (a socketpair in tests).
    init(descriptor: Int32) { self.descriptor = descriptor }

    deinit { close(descriptor) }

    /// Sends a command and waits for its reply, skipping other events; a non-zero status is an error.
    func send(_ command: [UInt8], what: String, timeoutMilliseconds: Int32 = 5_000) throws(HCIError) {
        let opcode = UInt16(command[0]) | UInt16(command[1]) << 8
        let index = UInt16(command[2]) | UInt16(command[3]) << 8
        let written = retryingOnInterrupt { command.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) } }
        guard written == command.count else { throw Self.failure(errno, what) }
        var buffer = [UInt8](repeating: 0, count: 512)
        let deadline = SystemTime.monotonicMilliseconds() + Int64(timeoutMilliseconds)
        while true {
            let remaining = deadline - SystemTime.monotonicMilliseconds()
            guard remaining > 0 else {
                throw HCIError(.timeout, "the kernel did not answer \(what) within \(timeoutMilliseconds) ms")
            }
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = interruptIsNothing { poll(&poller, 1, Int32(remaining)) }
            if ready < 0 { throw Self.failure(errno, what) }
            guard ready > 0 else { continue }
            let count = retryingOnInterrupt {
                buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            }
            guard count > 0 else {
                if count < 0 && errno == EAGAIN { continue }
                throw Self.failure(count < 0 ? errno : EPIPE, what)
            }
            let reply = buffer.withUnsafeBytes { MgmtPacket.Reply(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
            guard let reply, reply.opcode == opcode, reply.index == index else { continue }
            guard reply.status == 0 else {
                if reply.status == 0x14 { throw HCIError(.permission, "\(what) was refused: it needs CAP_NET_ADMIN") }
                throw HCIError(.controller, "\(what) failed: \(MgmtPacket.describe(status: reply.status))")
            }
            return
        }
    }

    static func failure(_ error: Int32, _ what: String) -> HCIError {
        if error == EPERM || error == EACCES { return HCIError(.permission, "cannot \(what): it needs CAP_NET_ADMIN") }
        return HCIError(.io, "cannot \(what): \(String(cString: strerror(error)))")
    }
}
