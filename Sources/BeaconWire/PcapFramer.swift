/// pcap (libpcap's classic format): a 24-byte file header, then 16-byte record headers.
///
/// The magic number gives the byte order and whether the second timestamp field counts microseconds
/// (`A1B2C3D4`) or nanoseconds (`A1B23C4D`).
public struct PcapFramer: CaptureFramer {
    static let fileHeaderLength = 24
    @usableFromInline static let recordHeaderLength = 16

    @usableFromInline var order: ByteOrder?
    @usableFromInline var nanosecondTimestamps = false
    @usableFromInline var link = LinkHeader.unsupported(0)

    public init() {}

    /// The byte order and resolution a magic number announces, read as a little-endian word.
    static func magic(_ word: UInt32) -> (ByteOrder, nanoseconds: Bool)? {
        switch word {
        case 0xA1B2_C3D4: (.little, false)
        case 0xA1B2_3C4D: (.little, true)
        case 0xD4C3_B2A1: (.big, false)
        case 0x4D3C_B2A1: (.big, true)
        default: nil
        }
    }

    @inlinable @inline(__always)
    public mutating func next(_ window: UnsafeMutableRawBufferPointer, atEnd: Bool) -> FrameStep {
        guard let order else {
            var reader = ByteReader(UnsafeRawBufferPointer(window))
            return readFileHeader(&reader)
        }
        // Nearly every pcap is little-endian (written on x86 or ARM). Its records are read with plain loads and a
        // big-endian file's take the same steps out of line, so the byte order is a branch that is always predicted
        // rather than a byte swap and a select between one record's length and the next record's address (which
        // is what a mispredicted branch further on waits for).
        guard order == .little else { return bigEndianRecord(window) }
        return record(window, order: .little)
    }

    @usableFromInline @inline(never)
    func bigEndianRecord(_ window: UnsafeMutableRawBufferPointer) -> FrameStep {
        record(window, order: .big)
    }

    @inlinable @inline(__always)
    func record(_ window: UnsafeMutableRawBufferPointer, order: ByteOrder) -> FrameStep {
        // Once per record: one bounds check for the header, one for the payload, then fixed-offset loads.
        guard window.count >= Self.recordHeaderLength, let header = UnsafeRawPointer(window.baseAddress) else {
            return .needMore(Self.recordHeaderLength)
        }
        let seconds = Self.word(header, 0, order)
        let fraction = Self.word(header, 4, order)
        let captured = Int(Self.word(header, 8, order))
        // The original length (at 12) is not needed: a snapped packet decodes as far as it goes.
        guard captured <= maxCaptureRecordLength else { return .corrupt(.corruptRecord) }
        let consumed = Self.recordHeaderLength + captured
        guard window.count >= consumed else { return .needMore(consumed) }
        // 32-bit seconds and fractions cannot overflow 64-bit nanoseconds, so no overflow checks are needed.
        let nanoseconds = Int64(seconds) &* 1_000_000_000 &+ Int64(fraction) &* (nanosecondTimestamps ? 1 : 1_000)
        let payload = UnsafeRawBufferPointer(start: header + Self.recordHeaderLength, count: captured)
        return .record(
            CaptureRecord(time: CaptureTime(nanosecondsSinceEpoch: nanoseconds), link: link, payload: payload),
            consumed: consumed)
    }

    @inlinable @inline(__always)
    static func word(_ bytes: UnsafeRawPointer, _ offset: Int, _ order: ByteOrder) -> UInt32 {
        order.value(bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    @usableFromInline
    mutating func readFileHeader(_ reader: inout ByteReader) -> FrameStep {
        guard reader.remaining >= Self.fileHeaderLength else { return .needMore(Self.fileHeaderLength) }
        guard let (order, nanoseconds) = Self.magic(reader.u32(.little)!) else { return .corrupt(.corruptRecord) }
        _ = reader.skip(16)  // version, time zone, sigfigs, snapshot length
        // The low 16 bits are the link type; the high bits may carry FCS information.
        self.link = LinkHeader(pcapLinkType: reader.u32(order)! & 0xFFFF)
        self.order = order
        self.nanosecondTimestamps = nanoseconds
        return .skipped(consumed: Self.fileHeaderLength)
    }
}
