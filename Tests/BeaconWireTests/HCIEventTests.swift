import BeaconTestSupport
import BeaconWire
import Testing

/// LE advertising report events built byte by byte.
@Suite(.timeLimit(.minutes(20))) struct HCIEventTests {
    func reports(_ event: [UInt8]) -> ([AdvertisingReportSnapshot], DecodeCounters) {
        var counters = DecodeCounters()
        var seen: [AdvertisingReportSnapshot] = []
        event.withUnsafeBytes { bytes in
            LEMetaEvent.forEachReport(inEvent: bytes, counters: &counters) { report, _ in
                seen.append(
                    AdvertisingReportSnapshot(
                        address: report.address.description, rssi: report.rssi, data: Array(report.data)))
            }
        }
        return (seen, counters)
    }

    struct AdvertisingReportSnapshot: Equatable {
        var address: String
        var rssi: Int8?
        var data: [UInt8]
    }

    static func legacy(_ reports: [[UInt8]]) -> [UInt8] {
        let parameters: [UInt8] = [0x02, UInt8(reports.count)] + reports.flatMap { $0 }
        return [0x3E, UInt8(parameters.count)] + parameters
    }

    static func report(_ last: UInt8, data: [UInt8], rssi: UInt8) -> [UInt8] {
        [0x00, 0x00, last, 0x00, 0x00, 0x00, 0x00, 0x00, UInt8(data.count)] + data + [rssi]
    }

    @Test func severalReportsInOneEventAreAllDecoded() {
        let (seen, counters) = reports(
            Self.legacy([
                Self.report(1, data: [0x02, 0x01, 0x06], rssi: 0xC4),
                Self.report(2, data: [], rssi: 0x7F),
                Self.report(3, data: [0x02, 0x0A, 0x00], rssi: 0xB0),
            ]))
        #expect(seen.map(\.address) == ["00:00:00:00:00:01", "00:00:00:00:00:02", "00:00:00:00:00:03"])
        #expect(seen.map(\.rssi) == [-60, nil, -80])
        #expect(counters.advertisingReports == 3)
    }

    @Test func dataOver31BytesIsDroppedAndTheNextReportKept() {
        let (seen, counters) = reports(
            Self.legacy([
                Self.report(1, data: [UInt8](repeating: 0, count: 32), rssi: 0xC4),
                Self.report(2, data: [], rssi: 0xC4),
            ]))
        #expect(seen.map(\.address) == ["00:00:00:00:00:02"])
        #expect(counters.drops[.badReportLength] == 1)
    }

    @Test func reportRunningPastTheEventIsDroppedWithTheRest() {
        var event = Self.legacy([Self.report(1, data: [], rssi: 0xC4), Self.report(2, data: [1, 2, 3], rssi: 0xC4)])
        event.removeLast(2)
        event[1] -= 2
        let (seen, counters) = reports(event)
        #expect(seen.count == 1)
        #expect(counters.drops[.reportPastEvent] == 1)
    }

    @Test func parameterLengthBeyondTheBytesIsATruncatedEvent() {
        var event = Self.legacy([Self.report(1, data: [], rssi: 0xC4)])
        event.removeLast()
        let (seen, counters) = reports(event)
        #expect(seen.isEmpty && counters.drops[.truncatedEvent] == 1)
    }

    @Test func extendedReportCarriesMoreThan31BytesForExtendedPDUs() {
        let data = [UInt8](repeating: 0x00, count: 40)
        let report: [UInt8] =
            [
                0x01, 0x00,  // event properties: connectable, not legacy
                0x01, 0x09, 0x00, 0x00, 0x00, 0x00, 0x00,  // random address ..:00:09, LSB first
                0x01, 0x00, 0xFF, 0x7F, 0xB5,  // PHYs, SID, TX power n/a, RSSI -75
                0x00, 0x00, 0x00,
            ] + [UInt8](repeating: 0, count: 6)  // interval, direct address
            + [UInt8(data.count)] + data
        let parameters: [UInt8] = [0x0D, 0x01] + report
        let (seen, counters) = reports([0x3E, UInt8(parameters.count)] + parameters)
        #expect(seen == [AdvertisingReportSnapshot(address: "00:00:00:00:00:09", rssi: -75, data: data)])
        #expect(counters.totalDrops == 0)
    }

    @Test func nonAdvertisingEventsAreSkipped() {
        let (seen, counters) = reports([0x0E, 0x04, 0x01, 0x0B, 0x20, 0x00])
        #expect(seen.isEmpty && counters.skipped == 1 && counters.totalDrops == 0)
    }

    /// Random bytes after the header: no crash, every report's data is bytes of the event, and whatever is not a
    /// report is counted (dropped or skipped), never lost without a trace.
    @Test(arguments: 0..<64)
    func arbitraryBytesAreReportsOrCountedNeverACrash(_ seed: Int) {
        var generator = SeededRandom(state: UInt64(seed))
        let body = (0..<Int(generator.next() % 300)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        for subevent in [nil, 0x02, 0x0D] as [UInt8?] {
            let parameters = (subevent.map { [$0] } ?? []) + body
            let event = [0x3E, UInt8(truncatingIfNeeded: parameters.count)] + parameters
            let (seen, counters) = reports(event)
            #expect(seen.allSatisfy { $0.data.count <= parameters.count }, "seed \(seed): data past the event")
            #expect(
                !seen.isEmpty || counters.totalDrops > 0 || counters.skipped > 0,
                "seed \(seed), subevent \(subevent.map(String.init) ?? "random"): neither a report nor a count")
        }
    }
}
