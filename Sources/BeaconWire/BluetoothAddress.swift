/// A 48-bit Bluetooth device address.
///
/// HCI carries it least-significant byte first; people (and tshark) write it most-significant first,
/// so `description` reverses the wire order.
public struct BluetoothAddress: Hashable, Sendable, CustomStringConvertible {
    /// The address as an integer: `0xAABBCCDDEEFF` prints as `AA:BB:CC:DD:EE:FF`.
    public let rawValue: UInt64

    @inlinable
    public init(rawValue: UInt64) { self.rawValue = rawValue & 0xFFFF_FFFF_FFFF }

    /// Reads six bytes in HCI (little-endian) order.
    @inlinable @inline(__always)
    public init?(wire reader: inout ByteReader) {
        guard let low = reader.u32(.little), let high = reader.u16(.little) else { return nil }
        self.init(rawValue: UInt64(high) << 32 | UInt64(low))
    }

    /// Reads six bytes in HCI order from a place the caller has bounds-checked.
    @inlinable @inline(__always)
    init(wire bytes: UnsafeRawPointer) {
        let low = UInt32(littleEndian: bytes.loadUnaligned(as: UInt32.self))
        let high = UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: 4, as: UInt16.self))
        self.init(rawValue: UInt64(high) << 32 | UInt64(low))
    }

    public var description: String {
        var text: [UInt8] = []
        text.reserveCapacity(17)
        append(to: &text)
        return String(asciiBytes: text)
    }

    /// `AA:BB:CC:DD:EE:FF`, most significant byte first.
    public func append(to text: inout [UInt8]) {
        for shift in stride(from: 40, through: 0, by: -8) {
            text.appendHexByte(UInt8(truncatingIfNeeded: rawValue >> UInt64(shift)))
            if shift > 0 { text.append(UInt8(ascii: ":")) }
        }
    }
}

/// Whether an advertiser's address is public (IEEE-assigned) or random.
public enum AddressType: UInt8, Sendable {
    case `public`
    case random

    /// Maps the HCI address type of an advertising report: 0 and 2 are public (identity) addresses,
    /// 1 and 3 random ones; 0xFF (anonymous, extended advertising only) carries no address and is
    /// reported as random.
    @inlinable
    public init(hci value: UInt8) {
        self = (value == 0 || value == 2) ? .public : .random
    }

    public var name: String { self == .public ? "public" : "random" }
}
