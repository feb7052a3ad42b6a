/// Hex text captures, one H4 packet per record:
///
/// - `hcidump -R` output: `> 04 3E 2B …` for incoming and `< 01 0B 20 …` for outgoing packets, long packets
///   continued on indented lines, an optional `-t` timestamp before the marker, and the `HCI sniffer` and
///   `device: hci0` banner lines (the device names the adapter);
/// - one packet per line, hex bytes with or without spaces, `#` starting a comment, and optionally a
///   timestamp and a marker as above.
///
/// Timestamps are `2021-03-04 05:06:07.123456` (or with `T` and `Z`), read as UTC, or Unix seconds
/// `1614834367.123456`. hcidump prints local time; replays of its files are off by the zone offset.
public struct HexTextFramer: CaptureFramer {
    /// A line this long without a newline is not hex text; it is dropped and skipped to its end.
    public static let maxLineLength = 65_536

    private var adapter: UInt16?
    private var skippingOverlongLine = false

    public init() {}

    public mutating func next(_ window: UnsafeMutableRawBufferPointer, atEnd: Bool) -> FrameStep {
        let text = UnsafeRawBufferPointer(window)
        if skippingOverlongLine {
            guard let newline = text.firstIndex(of: UInt8(ascii: "\n")) else {
                return text.isEmpty ? .needMore(1) : .skipped(consumed: text.count)
            }
            skippingOverlongLine = false
            return .skipped(consumed: newline + 1)
        }
        guard let firstEnd = Self.lineEnd(text, from: 0, atEnd: atEnd) else {
            return overlongOrMore(text)
        }
        var consumed = min(firstEnd + 1, text.count)
        var cursor = Self.skipBlanks(text, from: 0, to: firstEnd)
        if cursor == firstEnd || text[cursor] == UInt8(ascii: "#") { return .skipped(consumed: consumed) }
        if Self.hasPrefix(text, cursor, "HCI sniffer") { return .skipped(consumed: consumed) }
        if Self.hasPrefix(text, cursor, "device: ") {
            adapter = Self.adapterIndex(text, from: cursor + 8, to: firstEnd)
            return .skipped(consumed: consumed)
        }

        let time = HexTimestamp.parse(text, cursor: &cursor, end: firstEnd)
        cursor = Self.skipBlanks(text, from: cursor, to: firstEnd)
        var incoming: Bool?
        if cursor < firstEnd, text[cursor] == UInt8(ascii: ">") || text[cursor] == UInt8(ascii: "<") {
            incoming = text[cursor] == UInt8(ascii: ">")
            cursor += 1
        }
        // hcidump continues a long packet on indented lines; find them all before decoding anything,
        // because decoding writes over the text and a `.needMore` must leave it intact.
        if incoming != nil {
            while true {
                guard consumed < text.count else {
                    if atEnd { break }
                    return .needMore(text.count + 1)
                }
                guard text[consumed] == UInt8(ascii: " ") || text[consumed] == UInt8(ascii: "\t") else { break }
                guard let end = Self.lineEnd(text, from: consumed, atEnd: atEnd) else { return overlongOrMore(text) }
                let first = Self.skipBlanks(text, from: consumed, to: end)
                guard first < end, hexValue(text[first]) != nil else { break }
                consumed = min(end + 1, text.count)
            }
        }

        var decoder = InPlaceHexDecoder(window)
        var lineStart = cursor
        var lineEnd = firstEnd
        while true {
            guard decoder.decode(from: lineStart, to: lineEnd) else { return .dropped(.badHexLine, consumed: consumed) }
            guard lineEnd + 1 < consumed else { break }
            lineStart = lineEnd + 1
            lineEnd = Self.lineEnd(text, from: lineStart, atEnd: true)!
        }
        guard decoder.written > 0 else { return .dropped(.badHexLine, consumed: consumed) }
        let payload = UnsafeRawBufferPointer(rebasing: text[0..<decoder.written])
        return .record(
            CaptureRecord(time: time, link: .h4(incoming: incoming), adapter: adapter, payload: payload),
            consumed: consumed)
    }

    /// Whether the first line that is not blank, a comment or an hcidump banner reads as a packet
    /// (timestamp and marker optional, then hex). Lets detection reject text that is not a hex capture.
    static func firstLineLooksLikePacket(_ text: UnsafeRawBufferPointer) -> Bool {
        var start = 0
        while start < text.count {
            let end = lineEnd(text, from: start, atEnd: true)!
            var cursor = skipBlanks(text, from: start, to: end)
            let meaningful =
                cursor < end && text[cursor] != UInt8(ascii: "#")
                && !hasPrefix(text, cursor, "HCI sniffer") && !hasPrefix(text, cursor, "device: ")
            if meaningful {
                _ = HexTimestamp.parse(text, cursor: &cursor, end: end)
                cursor = skipBlanks(text, from: cursor, to: end)
                if cursor < end, text[cursor] == UInt8(ascii: ">") || text[cursor] == UInt8(ascii: "<") { cursor += 1 }
                var digits = 0
                while cursor < end, text[cursor] != UInt8(ascii: "#") {
                    let character = text[cursor]
                    if hexValue(character) != nil {
                        digits += 1
                    } else if character != 0x20, character != 0x09, character != 0x0D {
                        return false
                    }
                    cursor += 1
                }
                // A cut-off line at the end of the prefix still counts if what is there is hex.
                return digits > 0
            }
            start = end + 1
        }
        return true  // only comments and banners so far: an (as yet) empty capture
    }

    private mutating func overlongOrMore(_ text: UnsafeRawBufferPointer) -> FrameStep {
        guard text.count >= Self.maxLineLength else { return .needMore(text.count + 1) }
        skippingOverlongLine = true
        return .dropped(.badHexLine, consumed: text.count)
    }

    /// The index of the newline ending the line that starts at `start`, or the end of the text when
    /// it is the file's last line; `nil` when more text is needed to know.
    static func lineEnd(_ text: UnsafeRawBufferPointer, from start: Int, atEnd: Bool) -> Int? {
        var index = start
        while index < text.count {
            if text[index] == UInt8(ascii: "\n") { return index }
            index += 1
        }
        return atEnd ? text.count : nil
    }

    static func skipBlanks(_ text: UnsafeRawBufferPointer, from start: Int, to end: Int) -> Int {
        var index = start
        while index < end, text[index] == 0x20 || text[index] == 0x09 || text[index] == 0x0D { index += 1 }
        return index
    }

    static func hasPrefix(_ text: UnsafeRawBufferPointer, _ start: Int, _ prefix: StaticString) -> Bool {
        prefix.withUTF8Buffer { bytes in
            start + bytes.count <= text.count && bytes.indices.allSatisfy { text[start + $0] == bytes[$0] }
        }
    }

    /// `hci0` (or `hci0 snap_len: …`) in hcidump's banner.
    static func adapterIndex(_ text: UnsafeRawBufferPointer, from start: Int, to end: Int) -> UInt16? {
        guard hasPrefix(text, start, "hci") else { return nil }
        var value = 0
        var index = start + 3
        while index < end, let digit = text[index].asciiDigit, value < 65_536 {
            value = value * 10 + digit
            index += 1
        }
        return index > start + 3 ? UInt16(exactly: value) : nil
    }
}

/// Decodes hex pairs into the front of the same buffer. Two or more characters make each byte, so the
/// write position never passes the read position.
struct InPlaceHexDecoder {
    let buffer: UnsafeMutableRawBufferPointer
    private(set) var written = 0

    init(_ buffer: UnsafeMutableRawBufferPointer) { self.buffer = buffer }

    /// Decodes one line's hex (up to a `#` comment). False when the line holds anything but hex digits
    /// and blanks, or a byte is split by a blank.
    mutating func decode(from start: Int, to end: Int) -> Bool {
        var high: UInt8?
        var index = start
        while index < end {
            let character = buffer[index]
            index += 1
            if character == UInt8(ascii: "#") { break }
            if character == 0x20 || character == 0x09 || character == 0x0D {
                guard high == nil else { return false }
                continue
            }
            guard let nibble = hexValue(character) else { return false }
            if let pending = high {
                buffer[written] = pending << 4 | nibble
                written += 1
                high = nil
            } else {
                high = nibble
            }
        }
        return high == nil
    }
}

extension UInt8 {
    var asciiDigit: Int? { (0x30...0x39).contains(self) ? Int(self - 0x30) : nil }
}
