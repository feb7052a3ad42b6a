import BeaconTestSupport
import BeaconWire
import Testing

@Suite(.timeLimit(.minutes(20))) struct CaptureFormatTests {
    func detect(_ bytes: [UInt8]) -> CaptureFormat.Detection {
        bytes.withUnsafeBytes { CaptureFormat.detect($0) }
    }

    @Test func formatsAreRecognisedByContent() {
        #expect(detect([0xD4, 0xC3, 0xB2, 0xA1]) == .format(.pcap))
        #expect(detect([0xA1, 0xB2, 0x3C, 0x4D]) == .format(.pcap))
        #expect(detect([0x0A, 0x0D, 0x0D, 0x0A]) == .format(.pcapng))
        #expect(detect(Array("btsnoop\0".utf8)) == .format(.btsnoop))
        #expect(detect(Array("# comment\n> 04 0E 04 01 0B 20 00\n".utf8)) == .format(.hexText))
        #expect(detect([]) == .empty)
    }

    @Test func textThatIsNotHexIsUnknown() {
        guard case .unknown = detect(Array("root:x:0:0:root:/root:/bin/bash\n".utf8)) else {
            Issue.record("a passwd file was taken for a hex capture")
            return
        }
    }

    /// Noise behind a valid header neither crashes the stream nor depends on how it arrives: read a byte at a time
    /// and read whole, it gives the same adverts and the same counts (or the same error).
    @Test func arbitraryBytesNeverCrashTheStreamAndReadTheSameHoweverTheyArrive() throws {
        for seed in 0..<200 {
            var generator = SeededRandom(state: UInt64(seed))
            var bytes = (0..<Int(generator.next() % 2_000)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            // Give each a valid container header so the framers, not detection, see the noise.
            let headers: [[UInt8]] = [
                [0xD4, 0xC3, 0xB2, 0xA1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0, 0, 201, 0, 0, 0],
                Array("btsnoop\0".utf8) + [0, 0, 0, 1, 0, 0, 0x07, 0xD1],
                [
                    0x0A, 0x0D, 0x0D, 0x0A, 28, 0, 0, 0, 0x4D, 0x3C, 0x2B, 0x1A, 1, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF,
                    0xFF, 0xFF, 0xFF, 0xFF, 28, 0, 0, 0,
                ],
            ]
            bytes = headers[seed % headers.count] + bytes
            let piecemeal = Result { try Decode.bytes(bytes, chunk: 1 + seed % 13, capacity: 512) }
            let whole = Result { try Decode.bytes(bytes) }
            switch (piecemeal, whole) {
            case (.success(let piecemeal), .success(let whole)):
                #expect(piecemeal.adverts == whole.adverts && piecemeal.counters == whole.counters, "seed \(seed)")
            case (.failure(let piecemeal), .failure(let whole)):
                #expect("\(piecemeal)" == "\(whole)", "seed \(seed)")
            default:
                Issue.record("seed \(seed): one way of reading failed and the other did not: \(piecemeal) / \(whole)")
            }
        }
    }
}
