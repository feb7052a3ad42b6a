/// Turns capture records into adverts: link layer, HCI event, advertising reports, AD structures.
///
/// A value with no I/O: feed it records from a file, a socket or a test buffer. It never allocates
/// per record, and everything it drops is counted in `counters`.
public struct AdvertDecoder: Sendable {
    public var counters = DecodeCounters()

    public init() {}

    /// Decodes one record and calls `body` for every advertisement in it, of any kind.
    @inlinable @inline(__always)
    public mutating func decode(_ record: CaptureRecord, _ body: (Advert) -> Void) {
        // Wrapping adds for the per-record counters: a 64-bit count of adverts cannot overflow, and the trap's test
        // would be one more instruction on the path every advert takes.
        counters.records &+= 1
        if case .h4WithDirection = record.link, var reports = Self.incomingLegacyReports201(record.payload) {
            // Nearly every record of a scanning station's capture taken on Linux (tcpdump and Wireshark write link
            // type 201 for a Bluetooth interface). Counted as the general path below counts it (one HCI event,
            // then its reports), behind one combined check instead of a cursor read per header field.
            counters.hciEvents &+= 1
            let time = record.time
            LEMetaEvent.legacyReports(&reports, counters: &counters) { report, counters in
                Self.emit(report, time: time, adapter: record.adapter, counters: &counters, body)
            }
            return
        }
        decodeGeneral(record, body)
    }

    /// Every record the link type 201 shortcut does not take. Kept out of line so that `decode`, inlined into
    /// the record loop, stays small there.
    @inlinable @inline(never)
    mutating func decodeGeneral(_ record: CaptureRecord, _ body: (Advert) -> Void) {
        guard let packet = HCIPacket(record, counters: &counters) else { return }
        // Outgoing packets and everything that is not an event are not adverts.
        guard packet.kind == .event, packet.incoming != false else {
            counters.skipped += 1
            return
        }
        let time = record.time
        let adapter = packet.adapter
        LEMetaEvent.forEachReport(inEvent: packet.body, counters: &counters) { report, counters in
            Self.emit(report, time: time, adapter: adapter, counters: &counters, body)
        }
    }

    /// One report to one advert: classify its AD structures, count what they show, hand it on.
    @inlinable @inline(__always)
    static func emit(
        _ report: AdvertisingReport, time: CaptureTime?, adapter: UInt16?, counters: inout DecodeCounters,
        _ body: (Advert) -> Void
    ) {
        let summary = AdvertisingData.summarize(report.data)
        if summary.hadBadStructure { counters.drop(.badADStructure) }
        if summary.hadMalformedIBeacon { counters.drop(.malformedIBeacon) }
        counters.count(summary.kind)
        body(
            Advert(
                time: time, adapter: adapter, address: report.address, addressType: report.addressType,
                rssi: report.rssi, kind: summary.kind, beacon: summary.beacon))
    }

    /// A pcap link type 201 payload that is a received LE Advertising Report event, whole: direction (4 bytes,
    /// nonzero), H4 event type 04, event code 3E, a parameter length that fits the record and covers the
    /// subevent (02) and report count. Returns a reader over the parameters after the subevent; `nil` sends the
    /// record down the general path, which counts whatever is wrong with it.
    @inlinable @inline(__always)
    static func incomingLegacyReports201(_ payload: UnsafeRawBufferPointer) -> ByteReader? {
        // A buffer of 9 bytes or more has a base address.
        guard payload.count >= 9 else { return nil }
        let base = payload.baseAddress.unsafelyUnwrapped
        let length = Int(base.load(fromByteOffset: 6, as: UInt8.self))
        guard base.loadUnaligned(as: UInt32.self) != 0,
            base.loadUnaligned(fromByteOffset: 4, as: UInt16.self) == UInt16(littleEndian: 0x3E04),
            length >= 2, 7 + length <= payload.count,
            base.load(fromByteOffset: 7, as: UInt8.self) == LEMetaEvent.advertisingReport
        else { return nil }
        return ByteReader(UnsafeRawBufferPointer(start: base + 8, count: length - 1))
    }
}
