import BeaconTestSupport
import BeaconWire
import Testing

/// `AdvertDecoder` takes received LE Advertising Reports in pcap link type 201 records by a shortcut (one
/// length check, then the reports). The same bytes framed as plain H4 with the same direction take the general
/// path; both must give the same adverts and the same counts, for good events and for every near miss.
@Suite(.timeLimit(.minutes(20))) struct LinkType201ShortcutTests {
    struct Outcome: Equatable {
        var adverts: [Advert]
        var counters: DecodeCounters
    }

    static func decode(_ payload: [UInt8], link: LinkHeader) -> Outcome {
        var decoder = AdvertDecoder()
        var adverts: [Advert] = []
        payload.withUnsafeBytes { bytes in
            decoder.decode(
                CaptureRecord(time: CaptureTime(nanosecondsSinceEpoch: 42), link: link, adapter: 3, payload: bytes)
            ) {
                adverts.append($0)
            }
        }
        return Outcome(adverts: adverts, counters: decoder.counters)
    }

    /// The record as link type 201 gives it and as the general path sees it (H4 with the direction known).
    static func agree(_ h4: [UInt8], direction: UInt32, _ comment: Comment? = nil) {
        let withDirection = withUnsafeBytes(of: direction.bigEndian) { Array($0) } + h4
        let shortcut = decode(withDirection, link: .h4WithDirection)
        let general = decode(h4, link: .h4(incoming: direction != 0))
        #expect(shortcut == general, comment)
    }

    static let iBeacon: [UInt8] =
        [0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15]
        + (0..<16).map { UInt8($0) } + [0x00, 0x07, 0x01, 0x2C, 0xC5]

    static func event(_ reports: [[UInt8]]) -> [UInt8] { [0x04] + HCIEventTests.legacy(reports) }

    @Test func goodEventsAgree() {
        let beacon = HCIEventTests.report(1, data: Self.iBeacon, rssi: 0xC4)
        let other = HCIEventTests.report(2, data: [0x02, 0x01, 0x06], rssi: 0x7F)
        Self.agree(Self.event([beacon]), direction: 1)
        Self.agree(Self.event([beacon, other, beacon]), direction: 1)
        Self.agree(Self.event([]), direction: 1)
        #expect(
            Self.decode([0, 0, 0, 1] + Self.event([beacon]), link: .h4WithDirection).adverts.first?.beacon?.minor == 300
        )
    }

    @Test func nearMissesAgree() {
        let good = Self.event([HCIEventTests.report(1, data: Self.iBeacon, rssi: 0xC4)])
        Self.agree(good, direction: 0, "sent, not received")
        Self.agree(good, direction: 0x0100_0000, "any nonzero direction is received")
        for cut in 0..<good.count { Self.agree(Array(good.prefix(cut)), direction: 1, "cut at \(cut)") }
        for (index, value) in [(0, 0x01), (0, 0x02), (1, 0x0E), (3, 0x0D), (3, 0x0B), (4, 0x02)] {
            var changed = good
            changed[index] = UInt8(value)
            Self.agree(changed, direction: 1, "byte \(index) = \(value)")
        }
        for length in 0...Int(good[2]) + 2 {
            var changed = good
            changed[2] = UInt8(length)
            Self.agree(changed, direction: 1, "parameter length \(length)")
        }
        Self.agree(good + [0xAA, 0xBB], direction: 1, "bytes after the event")
    }

    @Test(arguments: 0..<32)
    func mutatedEventsAgree(_ seed: Int) {
        var generator = SeededRandom(state: UInt64(seed) &+ 201)
        let beacon = HCIEventTests.report(1, data: Self.iBeacon, rssi: 0xC4)
        let other = HCIEventTests.report(2, data: [0x02, 0x01, 0x06, 0x03, 0x03, 0xAA, 0xFE], rssi: 0xB0)
        for _ in 0..<64 {
            var bytes = Self.event(
                (0..<Int(generator.next() % 4)).map { _ in generator.next() % 2 == 0 ? beacon : other })
            for _ in 0..<Int(generator.next() % 4) where !bytes.isEmpty {
                bytes[Int(generator.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: generator.next())
            }
            Self.agree(bytes, direction: UInt32(generator.next() % 3), "\(bytes)")
        }
    }
}
