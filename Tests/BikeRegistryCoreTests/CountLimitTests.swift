import BikeRegistryCore
import Foundation
import Testing

/// What a limit's count means, without a database, on a clock the test sets: the counts themselves are the store's
/// (SharedLimitsTests runs them on both).
@Suite(.timeLimit(.minutes(1))) struct CountLimitTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)
    static let day = CountLimit("wrongClaimCodes", most: 10, per: 86_400)

    static func tally(_ count: Int, endsIn seconds: TimeInterval) -> CountLimit.Tally {
        CountLimit.Tally(count: count, windowEnd: start.addingTimeInterval(seconds))
    }

    @Test func aCountPastTheLimitWaitsUntilItsWindowEnds() {
        let minute = CountLimit("registrations", most: 5, per: 60)
        #expect(minute.wait(counted: Self.tally(5, endsIn: 30), now: Self.start) == nil, "the fifth may go ahead")
        #expect(
            minute.wait(counted: Self.tally(6, endsIn: 30), now: Self.start) == 30, "the sixth waits out the window")
        #expect(minute.wait(counted: Self.tally(6, endsIn: 0.2), now: Self.start) == 1, "a second at least")
        #expect(minute.wait(counted: Self.tally(60, endsIn: 0), now: Self.start) == nil, "a window just ended")
    }

    @Test func tenWrongCodesInADayShutANetworkOutForTheRestOfIt() {
        // Checked before the code is tried, counted once it is found wrong: nine leave one more.
        #expect(Self.day.wait(before: Self.tally(9, endsIn: 86_400 - 600), now: Self.start) == nil)
        #expect(Self.day.wait(before: Self.tally(10, endsIn: 86_400 - 600), now: Self.start) == 86_400 - 600)
        #expect(Self.day.wait(before: Self.tally(10, endsIn: 0.5), now: Self.start) == 1)
        #expect(Self.day.wait(before: Self.tally(10, endsIn: 0), now: Self.start) == nil, "the next day it may")
        #expect(Self.day.wait(before: .none, now: Self.start) == nil, "a network never counted")
    }

    @Test func aWindowFromAClockSteppedBackIsOverRatherThanHeldPastTheLimit() {
        // A window ending up to a window ahead is the one running (another server's clock a little ahead); one
        // ending further ahead began on a clock stepped back, and would refuse longer than the limit says.
        #expect(!Self.day.isOver(Self.tally(10, endsIn: 86_400 * 2), now: Self.start))
        #expect(Self.day.isOver(Self.tally(10, endsIn: 86_400 * 2 + 1), now: Self.start))
        #expect(Self.day.wait(before: Self.tally(10, endsIn: 86_400 * 1.5), now: Self.start) == 86_400, "at most a day")
        #expect(Self.day.wait(before: Self.tally(10, endsIn: 86_400 * 3), now: Self.start) == nil)
    }

    @Test func aLimitAllowsOneAtLeast() {
        #expect(CountLimit("x", most: 0, per: 60).most == 1)
    }
}
