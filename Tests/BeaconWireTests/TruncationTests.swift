import BeaconTestSupport
import BeaconWire
import Foundation
import Testing

/// Each capture cut at a byte offset: no crash, nothing invented, and every record that was complete before
/// the cut still decodes exactly as in the whole file.
///
/// Every offset is tried for every capture up to 32 KiB. The 123 KB Android capture would take minutes that
/// way in a debug build (each cut re-decodes the prefix), so it gets every offset in its first 4 KiB and last
/// 2 KiB and every 61st offset in between (about 8,000 cuts).
@Suite struct TruncationTests {
    static var captures: [URL] { Fixtures.edgeCaptures + Fixtures.sharedCaptures }

    static func cuts(count: Int) -> [Int] {
        guard count > 32 * 1024 else { return Array(0..<count) }
        return Array(0..<4_096) + Array(stride(from: 4_096, to: count - 2_048, by: 61)) + Array((count - 2_048)..<count)
    }

    @Test(arguments: captures)
    func prefixesDecodeTheirCompleteRecords(_ capture: URL) throws {
        let bytes = Array(try Data(contentsOf: capture))
        let full = Decode.beacons(try Decode.bytes(bytes))
        try #require(!full.isEmpty)
        let fullAdverts = full.map(\.identity)
        for cut in Self.cuts(count: bytes.count) {
            let complete = full.filter { $0.position.endOffset <= cut }.map(\.identity)
            let prefix: [DecodedAdvert.Identity]
            do {
                prefix = Decode.beacons(try Decode.bytes(Array(bytes[0..<cut]))).map(\.identity)
            } catch {
                // Too short to recognise: acceptable only before the first record is complete.
                #expect(complete.isEmpty, "cut at \(cut): \(error)")
                continue
            }
            // Everything complete before the cut, in order, then at most what the whole file has next.
            #expect(Array(prefix.prefix(complete.count)) == complete, "cut at \(cut) lost a complete record")
            #expect(fullAdverts.starts(with: prefix), "cut at \(cut) decoded something the whole file does not have")
        }
    }

    /// The same decode whether the bytes arrive in one piece or seven bytes per read through a small buffer.
    @Test(arguments: captures)
    func refillsDoNotChangeTheDecode(_ capture: URL) throws {
        let bytes = Array(try Data(contentsOf: capture))
        let whole = try Decode.bytes(bytes)
        let trickled = try Decode.bytes(bytes, chunk: 7, capacity: 600)
        #expect(trickled.adverts == whole.adverts)
        #expect(trickled.counters == whole.counters)
    }
}
