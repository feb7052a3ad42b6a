import Testing

@testable import BeaconRegistryClient

/// The retry timing on its own: no server, no clock, a seeded generator.
@Suite struct BackoffTests {
    /// SplitMix64: a seeded generator, so a failure is the same failure on the next run.
    struct Seeded: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// The delays of attempt 0, 1, 2… over many stations: each between half and all of its window, and the
    /// window doubling up to the cap.
    @Test func eachAttemptWaitsBetweenHalfAndAllOfADoublingWindowUpToTheCap() {
        let windows: [Duration] = [.seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(8), .seconds(8)]
        var random = Seeded(state: 7)
        var shortest = [Duration](repeating: .seconds(1_000), count: windows.count)
        var longest = [Duration](repeating: .zero, count: windows.count)
        for _ in 0..<2_000 {
            var backoff = Backoff(base: .seconds(1), cap: .seconds(8))
            for attempt in windows.indices {
                let delay = backoff.next(using: &random)
                #expect(delay >= windows[attempt] / 2 && delay <= windows[attempt], "attempt \(attempt): \(delay)")
                shortest[attempt] = min(shortest[attempt], delay)
                longest[attempt] = max(longest[attempt], delay)
            }
            #expect(backoff.attempt == windows.count)
        }
        for attempt in windows.indices {
            #expect(
                shortest[attempt] < windows[attempt] * 0.52 && longest[attempt] > windows[attempt] * 0.98,
                "the whole half-window is used")
        }
    }

    @Test func resetStartsTheWindowAgain() {
        var random = Seeded(state: 1)
        var backoff = Backoff(base: .seconds(1), cap: .seconds(60))
        for _ in 0..<5 { _ = backoff.next(using: &random) }
        backoff.reset()
        #expect(backoff.next(using: &random) <= .seconds(1))
    }

    @Test func manyFailuresNeverOverflowTheWindowAndACapBelowTheBaseIsTheBase() {
        var random = Seeded(state: 3)
        var backoff = Backoff(base: .seconds(1), cap: .seconds(3_600))
        var last = Duration.zero
        for _ in 0..<10_000 { last = backoff.next(using: &random) }
        #expect(last >= .seconds(1_800) && last <= .seconds(3_600))
        var odd = Backoff(base: .seconds(5), cap: .seconds(1))
        let delay = odd.next(using: &random)
        #expect(delay >= .milliseconds(2_500) && delay <= .seconds(5))
    }

    @Test func theRefreshPeriodIsJitteredBothWays() {
        var random = Seeded(state: 11)
        let periods = (0..<2_000).map { _ in jittered(.seconds(300), fraction: 0.1, using: &random) }
        #expect(periods.allSatisfy { $0 >= .seconds(270) && $0 <= .seconds(330) })
        #expect(periods.min()! < .seconds(273) && periods.max()! > .seconds(327))
    }

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
