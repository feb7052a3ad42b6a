import TextFormats

/// A point in time taken from a capture, in nanoseconds since the Unix epoch (UTC).
///
/// Replays use the capture's own clock, so decoding never reads the wall clock.
public struct CaptureTime: Hashable, Comparable, Sendable {
    public var nanosecondsSinceEpoch: Int64

    @inlinable
    public init(nanosecondsSinceEpoch: Int64) { self.nanosecondsSinceEpoch = nanosecondsSinceEpoch }

    @inlinable
    public init(seconds: Int64, nanoseconds: Int64) {
        let (product, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let (sum, overflow2) = product.addingReportingOverflow(nanoseconds)
        self.nanosecondsSinceEpoch = (overflow || overflow2) ? (seconds < 0 ? .min : .max) : sum
    }

    @inlinable
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.nanosecondsSinceEpoch < rhs.nanosecondsSinceEpoch }
}

extension CaptureTime {
    /// ISO 8601 in UTC with fractional seconds: `2021-03-04T05:06:07.123456Z`.
    /// Six fraction digits, nine where the capture has sub-microsecond precision.
    public var iso8601: String {
        var text: [UInt8] = []
        text.reserveCapacity(30)
        appendISO8601(to: &text)
        return String(asciiBytes: text)
    }

    /// `iso8601`, appended as bytes.
    public func appendISO8601(to text: inout [UInt8]) {
        let civil = CivilTime(self)
        civil.appendDate(to: &text)
        text.append(UInt8(ascii: "T"))
        civil.appendClock(to: &text)
        text.append(UInt8(ascii: "."))
        if civil.nanosecond % 1_000 == 0 {
            text.appendDecimal(civil.nanosecond / 1_000, width: 6)
        } else {
            text.appendDecimal(civil.nanosecond, width: 9)
        }
        text.append(UInt8(ascii: "Z"))
    }

    /// `2021-03-04`, the UTC date.
    public var isoDate: String { CivilTime(self).date }

    /// `05:06:07.123`, the UTC time of day to the millisecond (for people).
    public var clockMilliseconds: String {
        let civil = CivilTime(self)
        var text: [UInt8] = []
        civil.appendClock(to: &text)
        text.append(UInt8(ascii: "."))
        text.appendDecimal(civil.nanosecond / 1_000_000, width: 3)
        return String(asciiBytes: text)
    }
}

/// Calendar fields of a `CaptureTime` (proleptic Gregorian, UTC).
struct CivilTime {
    var year: Int64, month: Int64, day: Int64
    var hour: Int64, minute: Int64, second: Int64, nanosecond: Int64

    init(_ time: CaptureTime) {
        let nanos = time.nanosecondsSinceEpoch
        var seconds = nanos / 1_000_000_000
        var fraction = nanos % 1_000_000_000
        if fraction < 0 {
            fraction += 1_000_000_000
            seconds -= 1
        }
        var days = seconds / 86_400
        var secondOfDay = seconds % 86_400
        if secondOfDay < 0 {
            secondOfDay += 86_400
            days -= 1
        }
        (year, month, day) = CivilDate.civil(fromDays: days)
        hour = secondOfDay / 3_600
        minute = secondOfDay % 3_600 / 60
        second = secondOfDay % 60
        nanosecond = fraction
    }

    var date: String {
        var text: [UInt8] = []
        appendDate(to: &text)
        return String(asciiBytes: text)
    }

    func appendDate(to text: inout [UInt8]) {
        text.appendDecimal(year, width: 4)
        text.append(UInt8(ascii: "-"))
        text.appendDecimal(month, width: 2)
        text.append(UInt8(ascii: "-"))
        text.appendDecimal(day, width: 2)
    }

    /// `05:06:07`: hours, minutes and whole seconds.
    func appendClock(to text: inout [UInt8]) {
        text.appendDecimal(hour, width: 2)
        text.append(UInt8(ascii: ":"))
        text.appendDecimal(minute, width: 2)
        text.append(UInt8(ascii: ":"))
        text.appendDecimal(second, width: 2)
    }
}
