import TextFormats

/// Timestamps at the start of a hex-text line: `YYYY-MM-DD HH:MM:SS[.fraction]` (a `T` may replace the
/// space and a `Z` may follow; read as UTC) or Unix seconds with a fraction, `1614834367.123456`.
enum HexTimestamp {
    /// Parses a timestamp at `cursor` and moves past it; leaves `cursor` alone when there is none.
    static func parse(_ text: UnsafeRawBufferPointer, cursor: inout Int, end: Int) -> CaptureTime? {
        if let (time, next) = calendar(text, cursor, end) ?? unixSeconds(text, cursor, end) {
            cursor = next
            return time
        }
        return nil
    }

    private static func calendar(_ text: UnsafeRawBufferPointer, _ start: Int, _ end: Int) -> (CaptureTime, Int)? {
        var index = start
        func number(_ width: Int) -> Int64? {
            guard index + width <= end else { return nil }
            var value: Int64 = 0
            for _ in 0..<width {
                guard let digit = text[index].asciiDigit else { return nil }
                value = value * 10 + Int64(digit)
                index += 1
            }
            return value
        }
        func expect(_ characters: UInt8...) -> Bool {
            guard index < end, characters.contains(text[index]) else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect(0x2D), let month = number(2), expect(0x2D), let day = number(2),
            expect(0x20, 0x54), let hour = number(2), expect(0x3A), let minute = number(2), expect(0x3A),
            let second = number(2), (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60,
            second < 61
        else { return nil }
        let nanoseconds = fraction(text, &index, end)
        if index < end, text[index] == UInt8(ascii: "Z") { index += 1 }
        guard index == end || text[index] == 0x20 || text[index] == 0x09 else { return nil }
        let days = CivilDate.days(year: year, month: month, day: day)
        return (
            CaptureTime(seconds: days * 86_400 + hour * 3_600 + minute * 60 + second, nanoseconds: nanoseconds), index
        )
    }

    private static func unixSeconds(_ text: UnsafeRawBufferPointer, _ start: Int, _ end: Int) -> (CaptureTime, Int)? {
        var index = start
        var seconds: Int64 = 0
        while index < end, let digit = text[index].asciiDigit, index - start < 12 {
            seconds = seconds * 10 + Int64(digit)
            index += 1
        }
        // A fraction is required: without the dot, `04` would be a timestamp rather than a byte.
        guard index > start, index < end, text[index] == UInt8(ascii: ".") else { return nil }
        let nanoseconds = fraction(text, &index, end)
        guard index == end || text[index] == 0x20 || text[index] == 0x09 else { return nil }
        return (CaptureTime(seconds: seconds, nanoseconds: nanoseconds), index)
    }

    /// `.123456` → 123_456_000 ns; digits past the ninth are ignored.
    private static func fraction(_ text: UnsafeRawBufferPointer, _ index: inout Int, _ end: Int) -> Int64 {
        guard index < end, text[index] == UInt8(ascii: ".") else { return 0 }
        index += 1
        var value: Int64 = 0
        var digits = 0
        while index < end, let digit = text[index].asciiDigit {
            if digits < 9 {
                value = value * 10 + Int64(digit)
                digits += 1
            }
            index += 1
        }
        while digits < 9 {
            value *= 10
            digits += 1
        }
        return value
    }
}
