import BeaconCapture
import BeaconTestSupport
import BeaconWire
import Foundation
import Testing

/// `beacond record` writes with `PcapWriter`; what it writes must replay to the same adverts.
@Suite(.timeLimit(.minutes(20))) struct PcapWriterTests {
    /// Every event of a real capture rewritten as link type 201 decodes to the same adverts, with times cut
    /// to the microsecond the format keeps.
    @Test(arguments: [
        Fixtures.sharedDirectory.appendingPathComponent("android-h4-legacy.btsnoop"),
        Fixtures.sharedDirectory.appendingPathComponent("btvirt-dual-5.2.btsnoop"),
        Fixtures.cafeCapture,
    ])
    func rewrittenCaptureReplaysToTheSameAdverts(_ capture: URL) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("rewritten.pcap")
        let writer = try PcapWriter(path: path)
        var expected: [Advert] = []
        var decoder = AdvertDecoder()
        try CaptureFile(path: capture.path).forEachRecord { record, _ in
            guard let event = Self.event(of: record) else { return }
            let time = record.time.map { CaptureTime(nanosecondsSinceEpoch: $0.nanosecondsSinceEpoch / 1_000 * 1_000) }
            try event.withUnsafeBytes { event in
                try writer.append(event, time: time!)
                decoder.decode(CaptureRecord(time: time, link: .h4(incoming: true), payload: event)) {
                    expected.append($0)
                }
            }
        }
        // Every advert of the original came from an event the writer was given.
        var original = 0
        _ = try CaptureFile(path: capture.path).forEachAdvert { _, _ in original += 1 }
        #expect(original > 0)
        #expect(expected.count == original)

        var replayed: [Advert] = []
        let counters = try CaptureFile(path: path).forEachAdvert { advert, _ in replayed.append(advert) }
        #expect(replayed == expected)
        #expect(counters.totalDrops == decoder.counters.totalDrops)
    }

    /// A recording killed mid-way still ends at a record boundary: every prefix the writer left behind reads.
    @Test func everyPrefixTheWriterLeavesIsReadable() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("partial.pcap")
        let writer = try PcapWriter(path: path)
        let report: [UInt8] = Self.iBeaconReport(minor: 7)
        for index in 0..<3 {
            try report.withUnsafeBytes {
                try writer.append(
                    $0, time: CaptureTime(nanosecondsSinceEpoch: 1_700_000_000_000_000_000 + Int64(index) * 1_000))
            }
            var minors: [UInt16] = []
            _ = try CaptureFile(path: path).forEachAdvert { advert, _ in minors.append(advert.beacon!.minor) }
            #expect(minors == Array(repeating: 7, count: index + 1))
        }
    }

    @Test func unwritableFileIsAClearError() {
        #expect {
            try PcapWriter(path: "/nonexistent/dir/rec.pcap")
        } throws: { String(describing: $0).hasPrefix("/nonexistent/dir/rec.pcap: ") }
    }

    /// The H4 event (type byte first) a record carries, whatever its container's framing; nil for anything else.
    static func event(of record: CaptureRecord) -> [UInt8]? {
        let payload = Array(record.payload)
        let event = HCIPacket.Kind.event.rawValue
        switch record.link {
        case .h4(let incoming) where incoming != false:
            return payload.first == event ? payload : nil
        case .h4WithDirection:
            return payload.dropFirst(4).first == event ? Array(payload.dropFirst(4)) : nil
        case .monitorFields(_, let opcode):
            // The monitor channel's opcode 3 is an event, given without its H4 type byte.
            return opcode == 3 ? [event] + payload : nil
        case .monitor:
            return payload.count > 4 && payload[2] == 0 && payload[3] == 3 ? [event] + payload.dropFirst(4) : nil
        case .hciUnencapsulated, .unsupported, .h4:
            return nil
        }
    }

    /// An LE Advertising Report event (H4) with one iBeacon report in region E2C56DB5…:1.
    static func iBeaconReport(minor: UInt16) -> [UInt8] {
        let uuid: [UInt8] = [
            0xE2, 0xC5, 0x6D, 0xB5, 0xDF, 0xFB, 0x48, 0xD2, 0xB0, 0x60, 0xD0, 0xF5, 0xA7, 0x10, 0x96, 0xE0,
        ]
        let manufacturer: [UInt8] =
            [0x4C, 0x00, 0x02, 0x15] + uuid + [0x00, 0x01, UInt8(minor >> 8), UInt8(minor & 0xFF), 0xC5]
        let data: [UInt8] = [0x02, 0x01, 0x06, UInt8(manufacturer.count + 1), 0xFF] + manufacturer
        let report: [UInt8] = [0x01, 0x03, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, UInt8(data.count)] + data + [0xC4]
        return [0x04, 0x3E, UInt8(report.count + 1), 0x02] + report
    }
}
