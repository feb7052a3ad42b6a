/// btsnoop version 1 (RFC 1761's snoop, adapted by BlueZ and Android): a 16-byte header with the
/// datalink type, then records with 24-byte big-endian headers.
public struct BTSnoopFramer: CaptureFramer {
    static let magic: [UInt8] = Array("btsnoop\0".utf8)
    static let fileHeaderLength = 16
    static let recordHeaderLength = 24
    /// btsnoop timestamps count microseconds from midnight, 1 January of year 0 (proleptic Gregorian).
    static let microsecondsFromYearZeroToUnixEpoch: Int64 = 0x00DC_DDB3_0F2F_8000

    public enum Datalink: UInt32, Sendable {
        case hciUnencapsulated = 1001
        case hciUART = 1002
        case linuxMonitor = 2001
    }

    private var datalink: UInt32?

    public init() {}

    @inline(__always)
    public mutating func next(_ window: UnsafeMutableRawBufferPointer, atEnd: Bool) -> FrameStep {
        var reader = ByteReader(UnsafeRawBufferPointer(window))
        guard let datalink else {
            guard reader.remaining >= Self.fileHeaderLength else { return .needMore(Self.fileHeaderLength) }
            guard Self.magic.elementsEqual(reader.slice(8)!), reader.u32(.big)! == 1 else {
                return .corrupt(.corruptRecord)
            }
            self.datalink = reader.u32(.big)!
            return .skipped(consumed: Self.fileHeaderLength)
        }
        guard reader.remaining >= Self.recordHeaderLength else { return .needMore(Self.recordHeaderLength) }
        _ = reader.u32(.big)  // original length
        let included = Int(reader.u32(.big)!)
        let flags = reader.u32(.big)!
        _ = reader.u32(.big)  // cumulative drops
        let timestamp = Int64(bitPattern: reader.u64(.big)!)
        guard included <= maxCaptureRecordLength else { return .corrupt(.corruptRecord) }
        guard let payload = reader.slice(included) else { return .needMore(Self.recordHeaderLength + included) }
        let (micros, overflow) = timestamp.subtractingReportingOverflow(Self.microsecondsFromYearZeroToUnixEpoch)
        let time = overflow ? nil : CaptureTime(seconds: micros / 1_000_000, nanoseconds: micros % 1_000_000 * 1_000)
        return .record(
            CaptureRecord(time: time, link: Self.link(datalink, flags: flags), payload: payload),
            consumed: reader.offset)
    }

    static func link(_ datalink: UInt32, flags: UInt32) -> LinkHeader {
        switch Datalink(rawValue: datalink) {
        case .hciUART: .h4(incoming: flags & 1 == 1)
        case .linuxMonitor:
            .monitorFields(adapter: UInt16(truncatingIfNeeded: flags >> 16), opcode: UInt16(truncatingIfNeeded: flags))
        case .hciUnencapsulated: .hciUnencapsulated(incoming: flags & 1 == 1, commandOrEvent: flags & 2 == 2)
        case nil: .unsupported(datalink)
        }
    }
}
