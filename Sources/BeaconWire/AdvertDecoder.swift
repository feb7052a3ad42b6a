/// Turns capture records into adverts: link layer, HCI event, advertising reports, AD structures.
///
/// A value with no I/O: feed it records from a file, a socket or a test buffer. It never allocates
/// per record, and everything it drops is counted in `counters`.
public struct AdvertDecoder: Sendable {
    public var counters = DecodeCounters()

    public init() {}

    /// Decodes one record and calls `body` for every advertisement in it, of any kind.
    @inlinable
    public mutating func decode(_ record: CaptureRecord, _ body: (Advert) -> Void) {
        counters.records += 1
        guard let packet = HCIPacket(record, counters: &counters) else { return }
        // Outgoing packets and everything that is not an event are not adverts.
        guard packet.kind == .event, packet.incoming != false else {
            counters.skipped += 1
            return
        }
        let time = record.time
        let adapter = packet.adapter
        LEMetaEvent.forEachReport(inEvent: packet.body, counters: &counters) { report, counters in
            let summary = AdvertisingData.summarize(report.data)
            if summary.hadBadStructure { counters.drop(.badADStructure) }
            if summary.hadMalformedIBeacon { counters.drop(.malformedIBeacon) }
            counters.count(summary.kind)
            body(Advert(
                time: time, adapter: adapter, address: report.address, addressType: report.addressType,
                rssi: report.rssi, kind: summary.kind, beacon: summary.beacon))
        }
    }
}
