import Foundation
import Testing

@testable import BeaconCLI

/// status's formatting without Foundation's formatters.
@Suite(.timeLimit(.minutes(20))) struct StatusTextTests {
    @Test(arguments: [
        (0.0, "0.0"), (243.64, "243.6"), (170.45, "170.5"), (0.04, "0.0"), (0.05, "0.1"), (9.96, "10.0"),
        (2000, "2000.0"),
    ])
    func ratesHaveOneDecimal(value: Double, text: String) {
        #expect(StatusText.rate(value) == text)
    }

    @Test func timesParseWithAndWithoutFractions() throws {
        let fraction = try #require(StatusText.date("2024-06-01T08:12:00.123Z"))
        #expect(abs(fraction.timeIntervalSince1970 - 1_717_229_520.123) < 0.000_5)
        let whole = try #require(StatusText.date("2024-06-01T08:12:00Z"))
        #expect(whole.timeIntervalSince1970 == 1_717_229_520)
        #expect(StatusText.date("yesterday") == nil)
    }

    @Test func theClockIsLocalTime() {
        let instant = Date(timeIntervalSince1970: 1_717_229_520)
        var seconds = time_t(1_717_229_520)
        var parts = tm()
        localtime_r(&seconds, &parts)
        #expect(
            StatusText.localClock(instant)
                == String(format: "%02d:%02d:%02d", parts.tm_hour, parts.tm_min, parts.tm_sec))
    }
}
