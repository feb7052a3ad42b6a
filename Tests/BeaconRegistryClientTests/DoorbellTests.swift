import DaemonSupport
import Testing

@testable import BeaconRegistryClient

/// The doorbell the poster and refresher sleep on: a ring wakes a wait, and a wait that is over leaves
/// nothing behind (a stale ring once made every later wait return at once, and the poster spin).
///
/// "Woken by the ring" is told apart from "woken by the timeout" with a timeout far longer than any test run,
/// not with a tight bound: other suites can hold the cooperative pool for seconds on a 2-core machine.
@Suite struct DoorbellTests {
    @Test func aRingWakesAWaitAndLeavesNothingBehind() async {
        let bell = Doorbell()
        let clock = ContinuousClock()
        for _ in 0..<3 {
            let woken = clock.now
            async let waited: Void = bell.wait(timeout: .seconds(600), clock: clock)
            try? await Task.sleep(for: .milliseconds(20))
            bell.ring()
            await waited
            #expect(clock.now - woken < .seconds(300))
        }
        // No ring since: this wait must last its whole timeout.
        let start = clock.now
        await bell.wait(timeout: .milliseconds(300), clock: clock)
        #expect(clock.now - start >= .milliseconds(290))
    }

    @Test func aRingBeforeTheWaitIsKeptForIt() async {
        let bell = Doorbell()
        let clock = ContinuousClock()
        bell.ring()
        let start = clock.now
        await bell.wait(timeout: .seconds(600), clock: clock)
        #expect(clock.now - start < .seconds(300))
        let again = clock.now
        await bell.wait(timeout: .milliseconds(200), clock: clock)
        #expect(clock.now - again >= .milliseconds(190))
    }

    @Test func timeoutsEndWaitsOneAfterAnother() async {
        let bell = Doorbell()
        let clock = ContinuousClock()
        let start = clock.now
        for _ in 0..<5 { await bell.wait(timeout: .milliseconds(50), clock: clock) }
        #expect(clock.now - start >= .milliseconds(245))
    }
}
