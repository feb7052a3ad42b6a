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
        case newIndex = 0
        case deleteIndex = 1
        case event = 3
    }

    let descriptor: Int32

    init() throws(HCIError) {
        let fd = try HCISocket.openRaw("open the HCI monitor channel for", name: "the adapters")
        if let error = HCISocket.bind(fd, device: UInt16(HCI_DEV_NONE), channel: UInt16(HCI_CHANNEL_MONITOR)) {
            close(fd)
            if error == EPERM || error == EACCES {
                throw HCIError(
                    .permission,
                    "the HCI monitor channel needs CAP_NET_RAW (run as root, or `sudo setcap cap_net_raw,cap_net_admin+ep beacond`, or use the systemd unit)"
                )
            }
            throw HCISocket.failure(error, "bind the HCI monitor channel for", name: "the adapters")
        }
        descriptor = fd
    }

    deinit { close(descriptor) }

    /// What waits on the channel, a batch per call (recvmmsg); how many packets `batch` holds (0: none waited).
    func receive(into batch: PacketBatch) throws(HCIError) -> Int {
        switch batch.receive(from: descriptor) {
        case .success(let count): return count
        case .failure(let error):
            throw HCISocket.failure(error.code, "read the monitor channel for", name: "the adapters")
        }
    }

    /// One monitor packet's header fields: a packet too short for its header is an opcode nobody acts on, so a
    /// batch goes on.
    static func header(_ packet: UnsafeRawBufferPointer) -> (opcode: UInt16, index: UInt16, length: Int) {
        guard packet.count >= 6 else { return (0xFFFF, 0xFFFF, 0) }
        let opcode = UInt16(packet[0]) | UInt16(packet[1]) << 8
        let index = UInt16(packet[2]) | UInt16(packet[3]) << 8
        return (opcode, index, min(Int(UInt16(packet[4]) | UInt16(packet[5]) << 8), packet.count - 6))
    }
}
