/// A bounds-checked cursor over borrowed bytes: every read returns `nil` instead of reading past the end.
///
/// This is how BeaconWire looks at input, so "never read out of bounds" is a property of this type. The three
/// places every advert passes through (a pcap record header, a legacy report, the AD walk) instead check a
/// length once and load fixed offsets behind it; the truncation, random-input and reference tests cover them.
/// It borrows the caller's buffer (no copy, no allocation) and is valid only while that buffer is.
public struct ByteReader {
    public let bytes: UnsafeRawBufferPointer
    public var offset: Int

    @inlinable @inline(__always)
    public init(_ bytes: UnsafeRawBufferPointer, offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    @inlinable public var remaining: Int { bytes.count - offset }

    @inlinable @inline(__always)
    public mutating func skip(_ count: Int) -> Bool {
        guard count >= 0, count <= remaining else { return false }
        offset += count
        return true
    }

    @inlinable @inline(__always)
    public mutating func u8() -> UInt8? {
        guard remaining >= 1 else { return nil }
        defer { offset += 1 }
        return bytes[offset]
    }

    @inlinable @inline(__always)
    public mutating func u16(_ order: ByteOrder) -> UInt16? { integer(order) }

    @inlinable @inline(__always)
    public mutating func u32(_ order: ByteOrder) -> UInt32? { integer(order) }

    @inlinable @inline(__always)
    public mutating func u64(_ order: ByteOrder) -> UInt64? { integer(order) }

    /// The next `count` bytes as a borrowed slice (rebased to start at index 0).
    @inlinable @inline(__always)
    public mutating func slice(_ count: Int) -> UnsafeRawBufferPointer? {
        guard count >= 0, count <= remaining else { return nil }
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count])
    }

    @inlinable @inline(__always)
    mutating func integer<T: FixedWidthInteger>(_ order: ByteOrder) -> T? {
        let size = MemoryLayout<T>.size
        guard remaining >= size else { return nil }
        let raw = bytes.loadUnaligned(fromByteOffset: offset, as: T.self)
        offset += size
        return order.value(raw)
    }
}

public enum ByteOrder: Sendable {
    case little, big

    @inlinable public var swapped: ByteOrder { self == .little ? .big : .little }

    /// The integer whose bytes, stored in this order, were loaded as `raw`.
    @inlinable @inline(__always)
    public func value<T: FixedWidthInteger>(_ raw: T) -> T {
        self == .little ? T(littleEndian: raw) : T(bigEndian: raw)
    }
}
