import BeaconEngine
import BeaconWire
import Testing

@Suite struct ManualClockTests {
    @Test func sleepersWakeWhenTheClockPassesTheirDeadline() async throws {
        let clock = ManualClock(now: CaptureTime(nanosecondsSinceEpoch: 1_000))
        let sleeper = Task { try await clock.sleep(until: CaptureTime(nanosecondsSinceEpoch: 5_000)) }
        clock.advance(to: CaptureTime(nanosecondsSinceEpoch: 4_999))
        clock.advance(to: CaptureTime(nanosecondsSinceEpoch: 2_000))  // never backwards
        #expect(clock.now == CaptureTime(nanosecondsSinceEpoch: 4_999))
        // Not yet woken: keep advancing until it is (the sleeper may not have registered yet).
        clock.advance(by: .nanoseconds(1))
        try await sleeper.value
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
