import BeaconTestSupport
import Testing

@testable import DaemonSupport

/// The doorbell the poster and refresher sleep on: a ring wakes a wait, a timeout ends one, and a wait that is over
/// leaves nothing behind (a stale ring once made every later wait return at once, and the poster spin).
///
/// On a manual clock that moves only when the test moves it: a wait that ends while the clock stands still was
/// ended by its ring, and one that ends after the clock passes its timeout, by the timeout.
@Suite(.timeLimit(.minutes(20))) struct DoorbellTests {
    /// A wait on `clock` in a task of its own, and a way to see that it has ended.
    struct Waiting {
        let ended = Collected<Bool>()
        let task: Task<Void, Never>

        init(_ bell: Doorbell, timeout: Duration, clock: ManualClock) {
            let ended = ended
            task = Task {
                await bell.wait(timeout: timeout, clock: clock)
                ended.add(true)
            }
        }

        func hasEnded() async -> Bool {
            await eventually(within: 600) { !ended.all.isEmpty }
        }
    }

    @Test func aRingWakesAWaitAndLeavesNothingBehind() async {
        let bell = Doorbell()
        let clock = ManualClock()
        for _ in 0..<3 {
            let waiting = Waiting(bell, timeout: .seconds(600), clock: clock)
            #expect(await eventually(within: 600) { clock.sleepers == 1 }, "the wait's timeout is set")
            bell.ring()
            #expect(await waiting.hasEnded(), "the ring ended the wait, the clock standing still")
            #expect(!bell.keepsARing)
            #expect(clock.sleepers == 0, "its timeout went with it")
        }
        // No ring since: this wait ends when its timeout comes, not before.
        let waiting = Waiting(bell, timeout: .milliseconds(300), clock: clock)
        #expect(await eventually(within: 600) { clock.sleepers == 1 })
        clock.advance(by: .milliseconds(299))
        #expect(waiting.ended.all.isEmpty && clock.sleepers == 1)
        clock.advance(by: .milliseconds(1))
        #expect(await waiting.hasEnded())
        #expect(!bell.keepsARing)
    }

    @Test func aRingBeforeTheWaitIsKeptForIt() async {
        let bell = Doorbell()
        let clock = ManualClock()
        bell.ring()
        #expect(bell.keepsARing)
        let waiting = Waiting(bell, timeout: .seconds(600), clock: clock)
        #expect(await waiting.hasEnded(), "the kept ring ended the wait, the clock standing still")
        #expect(!bell.keepsARing, "and was used up")
    }

    @Test func timeoutsEndWaitsOneAfterAnother() async {
        let bell = Doorbell()
        let clock = ManualClock()
        for _ in 0..<5 {
            let waiting = Waiting(bell, timeout: .milliseconds(50), clock: clock)
            #expect(await eventually(within: 600) { clock.sleepers == 1 })
            #expect(waiting.ended.all.isEmpty)
            clock.advance(by: .milliseconds(50))
            #expect(await waiting.hasEnded())
            #expect(!bell.keepsARing, "a timeout leaves no ring for the next wait")
        }
    }
}
