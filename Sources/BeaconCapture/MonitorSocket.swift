internal import CBlueZ
#if canImport(Glibc)
import Glibc
#endif

/// The kernel's HCI monitor channel (what btmon reads): a read-only copy of every adapter's traffic, while
/// bluetoothd owns the radios. Each read is one packet behind a 6-byte header (opcode, adapter index,
/// length, little-endian). Opening it needs CAP_NET_RAW.
final class MonitorSocket {
    /// Monitor opcodes beacond acts on (BlueZ's btsnoop/monitor definitions).
    enum Opcode: UInt16 {
        case newIndex = 0, deleteIndex = 1, event = 3
    }

    let descriptor: Int32

    init() throws(HCIError) {
        let fd = try HCISocket.openRaw("open the HCI monitor channel for", name: "the adapters")
        if let error = HCISocket.bind(fd, device: UInt16(HCI_DEV_NONE), channel: UInt16(HCI_CHANNEL_MONITOR)) {
            close(fd)
            if error == EPERM || error == EACCES {
                throw HCIError(.permission, "the HCI monitor channel needs CAP_NET_RAW (run as root, or `sudo setcap cap_net_raw,cap_net_admin+ep beacond`, or use the systemd unit)")
            }
            throw HCISocket.failure(error, "bind the HCI monitor channel for", name: "the adapters")
        }
        descriptor = fd
    }

    deinit { close(descriptor) }

    /// Reads one waiting packet into `buffer`, without blocking: its opcode, adapter index and payload length
    /// (the payload starts at byte 6); nil when nothing was waiting.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(HCIError) -> (opcode: UInt16, index: UInt16, length: Int)? {
        let count = recv(descriptor, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT))
        if count < 0 {
            if errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK { return nil }
            throw HCISocket.failure(errno, "read the monitor channel for", name: "the adapters")
        }
        // A packet too short for its header is passed on as an opcode nobody acts on, so a batch goes on.
        guard count >= 6 else { return (0xFFFF, 0xFFFF, 0) }
        let opcode = UInt16(buffer[0]) | UInt16(buffer[1]) << 8
        let index = UInt16(buffer[2]) | UInt16(buffer[3]) << 8
        let length = min(Int(UInt16(buffer[4]) | UInt16(buffer[5]) << 8), count - 6)
        return (opcode, index, length)
    }
}
