/// Appending ASCII text to a byte array without building `String`s: `beacond replay` writes a line per iBeacon,
/// and String interpolation there cost a hundred times more than decoding the advert. The `String` forms
/// (`description`, `iso8601`) are made from these, so there is one formatting of each value.
extension Array where Element == UInt8 {
    @inlinable
    public mutating func appendASCII(_ text: StaticString) {
        text.withUTF8Buffer { append(contentsOf: $0) }
    }

    /// Decimal digits, with a leading minus sign when negative, zero-padded to at least `width` digits.
    public mutating func appendDecimal(_ value: Int64, width: Int = 1) {
        if value < 0 { append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: room for UInt64's 20 digits
        var count = 0
        Swift.withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[23 - count] = UInt8(ascii: "0") &+ UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            for _ in count..<Swift.max(count, width) { append(UInt8(ascii: "0")) }
            append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[(24 - count)...]))
        }
    }

    /// Two upper-case hex digits.
    public mutating func appendHexByte(_ byte: UInt8) {
        append(hexDigit(byte >> 4))
        append(hexDigit(byte & 0x0F))
    }
}

@inlinable
func hexDigit(_ nibble: UInt8) -> UInt8 {
    nibble < 10 ? UInt8(ascii: "0") &+ nibble : UInt8(ascii: "A") &+ nibble &- 10
}

extension String {
    /// A string from bytes an `append…` method wrote (always ASCII, so always valid UTF-8).
    init(asciiBytes: [UInt8]) { self.init(decoding: asciiBytes, as: UTF8.self) }
}
