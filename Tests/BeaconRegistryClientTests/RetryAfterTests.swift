import Testing

@testable import BeaconRegistryClient

/// A registry's `Retry-After`, read as the poster may trust it.
@Suite(.timeLimit(.minutes(20))) struct RetryAfterTests {
    @Test func retryAfterTakesSecondsCapsThemAndReadsADateAsAMinute() {
        #expect(RetryAfter.parse("120") == .seconds(120))
        #expect(RetryAfter.parse(" 0 ") == .zero)
        #expect(RetryAfter.parse("86400") == .seconds(3_600), "capped at an hour")
        #expect(
            RetryAfter.parse("Wed, 21 Oct 2026 07:28:00 GMT") == .seconds(60),
            "the Pi's clock cannot be trusted to compare dates")
        #expect(RetryAfter.parse("-5") == .seconds(60))
        #expect(RetryAfter.parse("99999999999999999999999") == .seconds(60))
        #expect(RetryAfter.parse("") == nil && RetryAfter.parse("   ") == nil)
    }
}
