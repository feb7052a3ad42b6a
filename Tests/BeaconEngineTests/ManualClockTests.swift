import BeaconEngine
import BeaconTestSupport
import BeaconWire
import Testing

@Suite(.timeLimit(.minutes(20))) struct ManualClockTests {
    /// Whether `sleeper` ended within `seconds`: a sleeper never woken fails the test instead of hanging it (it is
    /// cancelled, which ends its sleep).
    static func ended(_ sleeper: Task<Void, any Error>, within seconds: Double = 5) async -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        let watchdog = Task {
            try await Task.sleep(until: deadline)
            sleeper.cancel()
        }
        defer { watchdog.cancel() }
        do {
            try await sleeper.value
            return true
        } catch {
            return false
        }
    }

    @Test func sleepersWakeWhenTheClockPassesTheirDeadline() async throws {
        let clock = ManualClock(now: CaptureTime(nanosecondsSinceEpoch: 1_000))
        let sleeper = Task { try await clock.sleep(until: CaptureTime(nanosecondsSinceEpoch: 5_000)) }
        // Once it sleeps: a sleeper that arrives after its deadline returns at once, which would prove nothing here.
        while clock.sleepers == 0 { await Task.yield() }
        clock.advance(to: CaptureTime(nanosecondsSinceEpoch: 4_999))
        clock.advance(to: CaptureTime(nanosecondsSinceEpoch: 2_000))  // never backwards
        #expect(clock.now == CaptureTime(nanosecondsSinceEpoch: 4_999))
        #expect(clock.sleepers == 1, "not woken before its deadline")
        clock.advance(by: .nanoseconds(1))
        #expect(await Self.ended(sleeper), "woken when the clock reached its deadline")
        #expect(clock.now == CaptureTime(nanosecondsSinceEpoch: 5_000))
    }

    @Test func aDeadlineInThePastReturnsAtOnce() async throws {
        let clock = ManualClock(now: CaptureTime(nanosecondsSinceEpoch: 10))
        try await clock.sleep(until: CaptureTime(nanosecondsSinceEpoch: 10))
    }

    @Test func cancellingASleeperThrows() async {
        let clock = ManualClock()
        let sleeper = Task { try await clock.sleep(until: CaptureTime(nanosecondsSinceEpoch: 1_000_000)) }
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
    }
}
