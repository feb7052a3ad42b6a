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
        let civil = CivilTime(self)
        var text = civil.date
        text += "T"
        text += civil.clock
        return text + "Z"
    }

    /// `2021-03-04`, the UTC date.
    public var isoDate: String { CivilTime(self).date }

    /// `05:06:07.123`, the UTC time of day to the millisecond (for people).
    public var clockMilliseconds: String {
        let civil = CivilTime(self)
        return pad(civil.hour, 2) + ":" + pad(civil.minute, 2) + ":" + pad(civil.second, 2) + "." + pad(civil.nanosecond / 1_000_000, 3)
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
        if fraction < 0 { fraction += 1_000_000_000; seconds -= 1 }
        var days = seconds / 86_400
        var secondOfDay = seconds % 86_400
        if secondOfDay < 0 { secondOfDay += 86_400; days -= 1 }
        // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        hour = secondOfDay / 3_600
        minute = secondOfDay % 3_600 / 60
        second = secondOfDay % 60
        nanosecond = fraction
    }

    var date: String { pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) }

    var clock: String {
        let fraction = nanosecond % 1_000 == 0 ? pad(nanosecond / 1_000, 6) : pad(nanosecond, 9)
        return pad(hour, 2) + ":" + pad(minute, 2) + ":" + pad(second, 2) + "." + fraction
    }

    /// Days since 1970-01-01 of a civil date (the inverse of the above), for parsing text timestamps.
    static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}

func pad(_ value: Int64, _ width: Int) -> String {
    let digits = String(value.magnitude)
    let sign = value < 0 ? "-" : ""
    return sign + String(repeating: "0", count: max(0, width - digits.count)) + digits
}
