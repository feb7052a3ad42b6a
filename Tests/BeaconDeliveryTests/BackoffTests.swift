import BeaconTestSupport
import DaemonSupport
import Testing

/// The retry timing on its own: no server, no clock, a seeded generator.
@Suite(.timeLimit(.minutes(20))) struct BackoffTests {
    typealias Seeded = SeededRandom

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
}
