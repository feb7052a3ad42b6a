import BeaconTestSupport
import BeaconWire
import Foundation
import Testing

/// Every capture decodes to exactly the expected file beside it: the real captures in ../shared (expected
/// from tshark) and the hand-made edge cases in Fixtures/edge (expected from their generator).
@Suite(.timeLimit(.minutes(20))) struct FixtureDecodeTests {
    @Test func sharedFixturesArePresent() {
        // CI puts ../shared beside the clone; without it the real-capture tests below would test nothing.
        #expect(Fixtures.sharedCaptures.count >= 3, "no captures in \(Fixtures.sharedDirectory.path)")
    }

    @Test(arguments: Fixtures.sharedCaptures)
    func realCaptureMatchesTshark(_ capture: URL) throws {
        let expected = try Fixtures.expected(for: capture)
        let keys = Set(expected.first?.keys.map { $0 } ?? [])
        let decoded = try Decode.file(capture).jsonObjects().map { $0.filter { keys.contains($0.key) } }
        #expect(decoded == expected)
        #expect(!expected.isEmpty)
    }

    @Test(arguments: Fixtures.edgeCaptures)
    func edgeCaptureMatchesGenerator(_ capture: URL) throws {
        let result = try Decode.file(capture)
        #expect(try result.jsonObjects() == Fixtures.expected(for: capture))
        #expect(result.counters.drops[.truncatedRecord] == 0)
    }

    @Test func edgeFixturesCoverEveryContainer() {
        let extensions = Set(Fixtures.edgeCaptures.map { $0.pathExtension })
        #expect(extensions.isSuperset(of: ["pcap", "pcapng", "btsnoop", "txt", "hex"]))
    }

    /// The packet set every edge container carries (Fixtures/generate.py): what each case must count.
    @Test(arguments: [
        "h4-phdr-us-le.pcap", "h4-us-be.pcap", "monitor-ns-le.pcap", "h4.btsnoop", "monitor.btsnoop", "hcidump-R.txt",
    ])
    func edgeCasesAreCountedByReason(_ name: String) throws {
        let counters = try Decode.file(Fixtures.edgeDirectory.appendingPathComponent(name)).counters
        #expect(counters.drops[.badReportLength] == 2)  // one legacy, one legacy PDU in an extended report
        #expect(counters.drops[.reportPastEvent] == 1)
        #expect(counters.drops[.badADStructure] == 2)
        #expect(counters.drops[.truncatedEvent] == 1)
        #expect(counters.drops[.malformedIBeacon] == 1)
        #expect(counters.byKind[.iBeacon] == 8)
        #expect(counters.byKind[.altBeacon] == 1)
        #expect(counters.byKind[.eddystone] == 1)
        #expect(counters.byKind[.appleOther] == 2)
        #expect(counters.totalDrops == 7)
    }

    @Test func badHexLineIsCountedAndStillNumbered() throws {
        let result = try Decode.file(Fixtures.edgeDirectory.appendingPathComponent("packets.hex"))
        #expect(result.counters.drops[.badHexLine] == 1)
    }

    @Test func corruptLengthStopsTheFileAfterTheGoodRecords() throws {
        let result = try Decode.file(Fixtures.edgeDirectory.appendingPathComponent("corrupt-length.pcap"))
        #expect(result.counters.drops[.corruptRecord] == 1)
        #expect(Decode.beacons(result).count == 3)
    }

    /// The android capture is the busiest real one: its non-iBeacon adverts are classified, not reported.
    @Test func realRoomIsClassified() throws {
        let capture = Fixtures.sharedDirectory.appendingPathComponent("android-h4-legacy.btsnoop")
        let counters = try Decode.file(capture).counters
        #expect(counters.advertisingReports == 412)
        #expect(counters.byKind[.iBeacon] == 11)
        #expect(counters.byKind[.appleOther] > 0)
        #expect(counters.totalDrops == 0)
    }
}
