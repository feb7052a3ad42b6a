import BeaconTestSupport
import BeaconWire
import Foundation
import Testing

/// Each capture cut at a byte offset: no crash, nothing invented, and every record that was complete before
/// the cut still decodes exactly as in the whole file.
///
/// Each cut re-decodes the prefix, so the cost grows with the square of a capture's size. Every offset is tried in
/// a capture's first 4 KiB and its last 512 bytes, where headers and the final records are cut, and a prime stride
/// between them shifts each cut to another place in its record: 61 bytes, or 251 past 32 KiB (the 123 KB Android
/// capture). Every offset of every capture cost minutes of both cores in a sanitized debug build on a slower
/// machine, and starved the suites beside it (CI's ThreadSanitizer step of defec63); so the cuts also run on a
/// thread of their own, not the test pool's. In the sanitizer step the cuts are sparser still (`sparse`).
@Suite(.timeLimit(.minutes(20))) struct TruncationTests {
    static var captures: [URL] { Fixtures.edgeCaptures + Fixtures.sharedCaptures }

    /// In `.ci/run`'s sanitizer step (BEACOND_LOAD_TESTS=off), a sparser set, as the load tests are left out there:
    /// even a tenth of the cuts held one of CI's two cores for the whole instrumented run (254 s, defec63's code), and
    /// the suites whose subject is a deadline missed theirs. The plain step, on every commit, has the full set.
    static let sparse = LoadTests.areOff

    static func cuts(count: Int) -> [Int] {
        let (head, tail) = sparse ? (512, 64) : (4_096, 512)
        guard count > head + tail else { return Array(0..<count) }
        let stride = sparse ? 997 : count > 32 * 1024 ? 251 : 61
        return Array(0..<head) + Array(Swift.stride(from: head, to: count - tail, by: stride))
            + Array((count - tail)..<count)
    }

    @Test(arguments: captures)
    func prefixesDecodeTheirCompleteRecords(_ capture: URL) async throws {
        let bytes = Array(try Data(contentsOf: capture))
        let cuts = Self.cuts(count: bytes.count)
        // Found off the pool: the whole file's adverts, and each cut that broke the rule (why).
        let (adverts, failures) = try await onOwnThread { () throws -> (Int, [String]) in
            let full = Decode.beacons(try Decode.bytes(bytes))
            let fullAdverts = full.map(\.identity)
            let failures = cuts.compactMap { cut -> String? in
                let complete = full.filter { $0.position.endOffset <= cut }.map(\.identity)
                let prefix: [DecodedAdvert.Identity]
                do {
                    prefix = Decode.beacons(try Decode.bytes(Array(bytes[0..<cut]))).map(\.identity)
                } catch {
                    // Too short to recognise: acceptable only before the first record is complete.
                    return complete.isEmpty ? nil : "cut at \(cut): \(error)"
                }
                // Everything complete before the cut, in order, then at most what the whole file has next.
                if Array(prefix.prefix(complete.count)) != complete { return "cut at \(cut) lost a complete record" }
                if !fullAdverts.starts(with: prefix) {
                    return "cut at \(cut) decoded something the whole file does not have"
                }
                return nil
            }
            return (full.count, failures)
        }
        #expect(adverts > 0, "the whole capture decodes to adverts")
        #expect(failures.isEmpty, "\(failures.prefix(5)) (\(failures.count) of \(cuts.count) cuts)")
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
