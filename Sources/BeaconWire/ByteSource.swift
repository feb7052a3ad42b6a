/// Where a capture's bytes come from. BeaconWire never does I/O itself: the file reader in BeaconCapture
/// conforms to this, and so does `MemoryByteSource` for tests and fuzzing.
public protocol ByteSource {
    /// Fills the front of `buffer` and returns how many bytes it wrote; 0 means the end of the data.
    mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int
}

/// Bytes already in memory, handed out in pieces of at most `chunk` bytes (a small chunk exercises the
/// reader's refill and carry-over logic the way a slow pipe would).
public struct MemoryByteSource: ByteSource {
    private let bytes: [UInt8]
    private var offset = 0
    private let chunk: Int

    public init(_ bytes: [UInt8], chunk: Int = .max) {
        self.bytes = bytes
        self.chunk = max(1, chunk)
    }

    public mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let count = min(buffer.count, bytes.count - offset, chunk)
        guard count > 0 else { return 0 }
        bytes.withUnsafeBytes { source in
            buffer.baseAddress!.copyMemory(from: source.baseAddress! + offset, byteCount: count)
        }
        offset += count
        return count
    }
}
