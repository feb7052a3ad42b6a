import Foundation
import Testing
import TextFormats

@Suite(.timeLimit(.minutes(20))) struct TextFormatsTests {
    /// Every character a JSON string may hold, control characters, quotes and backslashes among them, and text of
    /// several scripts: the literal reads back as the text it was made from.
    @Test func aJSONStringReadsBackAsItsText() throws {
        var text = String((0..<0x80).map { Character(Unicode.Scalar($0)!) })
        text += "é ß 日本 🏍️ \u{2028}"
        let literal = JSONString.literal(text)
        let read = try JSONSerialization.jsonObject(with: Data("[\(literal)]".utf8)) as? [String]
        #expect(read == [text])
        #expect(JSONString.literal("a\"b\\c\nd\u{1}") == #""a\"b\\c\nd\u0001""#)
    }

    /// Every day from year -1000 to 3000 goes to its date and back, and the dates follow one another as a calendar's.
    @Test func daysAndDatesGoBothWays() {
        let start = CivilDate.days(year: -1000, month: 1, day: 1)
        let end = CivilDate.days(year: 3000, month: 12, day: 31)
        var previous = CivilDate.civil(fromDays: start - 1)
        for days in start...end {
            let date = CivilDate.civil(fromDays: days)
            #expect(CivilDate.days(year: date.year, month: date.month, day: date.day) == days)
            let next =
                date.day == previous.day + 1 && date.month == previous.month
                || date.day == 1 && (date.month == previous.month + 1 || date.month == 1 && previous.month == 12)
            if !next { Issue.record("\(previous) is not followed by \(date)") }
            previous = date
        }
        #expect(CivilDate.civil(fromDays: 0) == (1970, 1, 1))
        #expect(CivilDate.days(year: 2000, month: 3, day: 1) == 11_017)
    }
}
