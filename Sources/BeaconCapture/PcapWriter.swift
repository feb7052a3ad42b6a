public import BeaconWire
import SystemPackage

/// Writes a classic pcap file with link type 201 (Bluetooth HCI H4 with a 4-byte direction header), which
/// Wireshark, tshark and `beacond replay` all read. Each record is written whole with one write(2), so a file
/// cut short by a kill ends at a record boundary.
public final class PcapWriter {
    private let descriptor: FileDescriptor
    public let path: String
    public private(set) var records = 0
    private var scratch: [UInt8] = []

    public init(path: String) throws(CaptureFileError) {
        self.path = path
        do {
            descriptor = try FileDescriptor.open(
                path, .writeOnly, options: [.create, .truncate, .closeOnExec],
                permissions: [.ownerReadWrite, .groupRead])
        } catch {
            throw CaptureFileError(path: path, reason: "\(error)")
        }
        // Magic (microseconds, written little-endian), version 2.4, zone 0, sigfigs 0, snaplen, link type 201.
        var header: [UInt8] = []
        for value: UInt32 in [0xA1B2_C3D4] { header += Self.le32(value) }
        header += [2, 0, 4, 0]
        for value: UInt32 in [0, 0, 65_535, 201] { header += Self.le32(value) }
        try write(header)
    }

    deinit { try? descriptor.close() }

    /// Appends one H4 packet (type byte first) received by the host at `time`.
    public func append(_ packet: UnsafeRawBufferPointer, time: CaptureTime, incoming: Bool = true)
        throws(CaptureFileError)
    {
        let seconds = time.nanosecondsSinceEpoch / 1_000_000_000
        let micros = (time.nanosecondsSinceEpoch % 1_000_000_000) / 1_000
        let length = UInt32(packet.count + 4)
        scratch.removeAll(keepingCapacity: true)
        scratch +=
            Self.le32(UInt32(truncatingIfNeeded: seconds)) + Self.le32(UInt32(micros)) + Self.le32(length)
            + Self.le32(length)
        scratch += [0, 0, 0, incoming ? 1 : 0]
        scratch += packet
        try write(scratch)
        records += 1
    }

    private func write(_ bytes: [UInt8]) throws(CaptureFileError) {
        do {
            _ = try bytes.withUnsafeBytes { try descriptor.writeAll($0) }
        } catch {
            throw CaptureFileError(path: path, reason: "\(error)")
        }
    }

    static func le32(_ value: UInt32) -> [UInt8] {
        [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 24)]
    }
}
