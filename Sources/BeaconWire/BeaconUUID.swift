/// A 128-bit proximity UUID, stored inline (no allocation) in network byte order as an integer.
public struct BeaconUUID: Hashable, Sendable, CustomStringConvertible {
    /// The 16 UUID bytes read big-endian: the first byte on the air is the most significant.
    public let rawValue: UInt128

    @inlinable
    public init(rawValue: UInt128) { self.rawValue = rawValue }

    /// Parses `21EECF71-D5C7-4A00-9B90-27C94B5146EA` (either case; the hyphens are optional,
    /// but where present they must be in the canonical places).
    public init?(_ text: some StringProtocol) {
        var value: UInt128 = 0
        var digits = 0
        let hyphens: Set<Int> = [8, 13, 18, 23]
        for (index, character) in text.utf8.enumerated() {
            if character == UInt8(ascii: "-") {
                guard text.utf8.count == 36, hyphens.contains(index) else { return nil }
                continue
            }
            guard let nibble = hexValue(character) else { return nil }
            value = value << 4 | UInt128(nibble)
            digits += 1
        }
        guard digits == 32, text.utf8.count == 32 || text.utf8.count == 36 else { return nil }
        self.rawValue = value
    }

    /// Canonical form: upper case, 8-4-4-4-12.
    public var description: String {
        var text: [UInt8] = []
        text.reserveCapacity(36)
        append(to: &text)
        return String(asciiBytes: text)
    }

    /// The canonical form, appended as bytes.
    public func append(to text: inout [UInt8]) {
        for index in 0..<16 {
            if index == 4 || index == 6 || index == 8 || index == 10 { text.append(UInt8(ascii: "-")) }
            text.appendHexByte(UInt8(truncatingIfNeeded: rawValue >> UInt128(8 * (15 - index))))
        }
    }
}

@inlinable
func hexValue(_ character: UInt8) -> UInt8? {
    switch character {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): character &- UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): character &- UInt8(ascii: "a") &+ 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): character &- UInt8(ascii: "A") &+ 10
    default: nil
    }
}
