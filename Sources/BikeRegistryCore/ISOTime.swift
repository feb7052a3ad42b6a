public import Foundation
import TextFormats

/// RFC 3339 times (the `date-time` of the API's schema) read exactly as that grammar allows: any number of
/// fractional digits, `Z` or any `±hh:mm` offset (Foundation's parser refuses offsets past ±18 h, which the grammar
/// allows), `T` or `t`. Written back in UTC to the millisecond (`2024-06-01T08:00:30.325Z`): the API's answers and the
/// messages to owners, by hand, as every sighting's message is written with it. Both directions are total: any text
/// parses to a time or to nil (a 400), and any time formats.
public enum ISOTime {
    public static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        var index = 0
        func number(_ digits: Int) -> Int? {
            guard index + digits <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[index..<index + digits] {
                guard (0x30...0x39).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            index += digits
            return value
        }
        func expect(_ characters: String) -> Bool {
            guard index < bytes.count, characters.utf8.contains(bytes[index]) else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2), expect("Tt "),
            let hour = number(2), expect(":"), let minute = number(2), expect(":"), let second = number(2)
        else { return nil }
        var fraction = 0.0
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            var scale = 0.1
            let start = index
            while index < bytes.count, (0x30...0x39).contains(bytes[index]) {
                fraction += Double(bytes[index] - 0x30) * scale
                scale /= 10
                index += 1
            }
            guard index > start else { return nil }
        }
        var offset = 0
        if expect("Zz") {
            offset = 0
        } else if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
            let sign = bytes[index] == UInt8(ascii: "-") ? -1 : 1
            index += 1
            guard let hours = number(2), expect(":"), let minutes = number(2), hours <= 23, minutes <= 59 else {
                return nil
            }
            offset = sign * (hours * 3600 + minutes * 60)
        } else {
            return nil
        }
        guard index == bytes.count, (1...12).contains(month), (1...daysIn(month, year)).contains(day), hour <= 23,
            minute <= 59, second <= 60
        else { return nil }
        let days = Int(CivilDate.days(year: Int64(year), month: Int64(month), day: Int64(day)))
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    /// The earliest and latest times RFC 3339 can write (years 0000 to 9999). `format` writes any time outside them,
    /// and a time that is no number (NaN, ±infinity), as the nearest of the two: it is a total function, since the
    /// registry writes times that a station or an old database gave it, and a trap there took the server down.
    public static let earliest = Date(timeIntervalSince1970: -62_167_219_200)
    public static let latest = Date(timeIntervalSince1970: 253_402_300_799.999)

    public static func format(_ date: Date) -> String { write(date, between: "T", milliseconds: true, after: "Z") }

    /// `2024-06-01 08:00:30 UTC`: what a person reads (the owner's page without its script, ntfy, `station list`).
    public static func readable(_ date: Date) -> String {
        write(date, between: " ", milliseconds: false, after: " UTC")
    }

    private static func write(_ date: Date, between: String, milliseconds: Bool, after: String) -> String {
        var text = [UInt8]()
        text.reserveCapacity(24)
        let parts = Parts(date)
        parts.writeDate(into: &text)
        text.append(contentsOf: between.utf8)
        parts.writeTime(into: &text, milliseconds: milliseconds)
        text.append(contentsOf: after.utf8)
        return String(decoding: text, as: UTF8.self)
    }

    /// A time's calendar fields in UTC, to the millisecond, clamped to what RFC 3339 can write.
    private struct Parts {
        package var year: Int, month: Int, day: Int
        /// Milliseconds into the day.
        package var milliseconds: Int

        package init(_ date: Date) {
            // To the nearest millisecond, so that a time read from `…30.123Z` is written back as that (a Date holds it
            // as a double a hair above or below; Foundation's ISO8601FormatStyle rounds down and writes .122 for
            // some). Clamped before any conversion to an integer, which is where a NaN or 1e300 would trap.
            let seconds = date.timeIntervalSince1970
            let bounded =
                seconds.isNaN
                ? ISOTime.earliest.timeIntervalSince1970
                : min(max(seconds, ISOTime.earliest.timeIntervalSince1970), ISOTime.latest.timeIntervalSince1970)
            let total = Int64((bounded * 1000).rounded())
            let (days, inDay) = total.quotientAndRemainder(dividingBy: 86_400_000)
            let (day, remainder) = inDay < 0 ? (days - 1, inDay + 86_400_000) : (days, inDay)
            let civil = CivilDate.civil(fromDays: Int64(day))
            (year, month, self.day) = (Int(civil.year), Int(civil.month), Int(civil.day))
            milliseconds = Int(remainder)
        }

        package func writeDate(into text: inout [UInt8]) {
            ISOTime.digits(year, 4, into: &text)
            text.append(UInt8(ascii: "-"))
            ISOTime.digits(month, 2, into: &text)
            text.append(UInt8(ascii: "-"))
            ISOTime.digits(day, 2, into: &text)
        }

        package func writeTime(into text: inout [UInt8], milliseconds withMilliseconds: Bool) {
            ISOTime.digits(milliseconds / 3_600_000, 2, into: &text)
            text.append(UInt8(ascii: ":"))
            ISOTime.digits(milliseconds / 60_000 % 60, 2, into: &text)
            text.append(UInt8(ascii: ":"))
            ISOTime.digits(milliseconds / 1000 % 60, 2, into: &text)
            if withMilliseconds {
                text.append(UInt8(ascii: "."))
                ISOTime.digits(milliseconds % 1000, 3, into: &text)
            }
        }
    }

    /// `value`'s last `count` decimal digits; `value` is never negative here (the clamp keeps years at 0 or more).
    private static func digits(_ value: Int, _ count: Int, into text: inout [UInt8]) {
        var scale = 1
        for _ in 1..<count { scale *= 10 }
        let value = max(0, value)
        while scale > 0 {
            text.append(UInt8(ascii: "0") + UInt8(value / scale % 10))
            scale /= 10
        }
    }

    private static func daysIn(_ month: Int, _ year: Int) -> Int {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}
