import BeaconTestSupport
import Foundation
import Testing

@testable import BeaconWire

/// The record loop keeps the window's bounds in locals and hands them back to the stream around every read and
/// skip; these hold it to that when a read fails.
@Suite(.timeLimit(.minutes(20))) struct CaptureStreamTests {
    /// Serves its bytes a few at a time, and fails once when `failAt` bytes have been served.
    struct FailingOnceSource: ByteSource {
        struct ReadFailed: Error {}
        let bytes: [UInt8]
        let failAt: Int
        var offset = 0
        var failed = false

        mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
            if !failed, offset >= failAt {
                failed = true
                throw ReadFailed()
            }
            let count = min(buffer.count, 7, bytes.count - offset)
            bytes.withUnsafeBytes {
                buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[offset..<offset + count]))
            }
            offset += count
            return count
        }
    }

    @Test(arguments: Fixtures.edgeCaptures)
    func aFailedReadLeavesTheWindowInsideTheBuffer(capture: URL) throws {
        let bytes = Array(try Data(contentsOf: capture))
        // A small buffer, so that reads both carry the tail to the front and grow the buffer.
        for failAt in stride(from: CaptureFormat.detectionLength, to: bytes.count, by: 41) {
            let stream = try CaptureStream(source: FailingOnceSource(bytes: bytes, failAt: failAt), capacity: 64)
            #expect(throws: FailingOnceSource.ReadFailed.self) { try stream.forEachRecord { _, _ in } }
            #expect(
                0 <= stream.start && stream.start <= stream.end && stream.end <= stream.buffer.count,
                "\(capture.lastPathComponent), failing after \(failAt) bytes: start \(stream.start), end \(stream.end)")
            // A second pass starts a new framer in the middle of the file; whatever it makes of that, it ends.
            try stream.forEachRecord { _, _ in }
        }
    }
}
