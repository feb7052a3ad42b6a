/// pcap (libpcap's classic format): a 24-byte file header, then 16-byte record headers.
///
/// The magic number gives the byte order and whether the second timestamp field counts microseconds
/// (`A1B2C3D4`) or nanoseconds (`A1B23C4D`).
public struct PcapFramer: CaptureFramer {
    static let fileHeaderLength = 24
    static let recordHeaderLength = 16

    private var order: ByteOrder?
    private var nanosecondTimestamps = false
    private var link = LinkHeader.unsupported(0)

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

    @inline(__always)
    public mutating func next(_ window: UnsafeMutableRawBufferPointer, atEnd: Bool) -> FrameStep {
        var reader = ByteReader(UnsafeRawBufferPointer(window))
        guard let order else { return readFileHeader(&reader) }
        guard reader.remaining >= Self.recordHeaderLength else { return .needMore(Self.recordHeaderLength) }
        let seconds = reader.u32(order)!
        let fraction = reader.u32(order)!
        let captured = Int(reader.u32(order)!)
        _ = reader.u32(order)  // original length: a snapped packet decodes as far as it goes
        guard captured <= maxCaptureRecordLength else { return .corrupt(.corruptRecord) }
        guard let payload = reader.slice(captured) else { return .needMore(Self.recordHeaderLength + captured) }
        let time = CaptureTime(
            seconds: Int64(seconds), nanoseconds: nanosecondTimestamps ? Int64(fraction) : Int64(fraction) * 1_000)
        return .record(CaptureRecord(time: time, link: link, payload: payload), consumed: reader.offset)
    }

    private mutating func readFileHeader(_ reader: inout ByteReader) -> FrameStep {
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
