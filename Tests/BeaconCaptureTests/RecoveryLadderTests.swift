import BeaconCapture
import Testing

/// The ladder's decisions, fed with times in seconds.
@Suite(.timeLimit(.minutes(20))) struct RecoveryLadderTests {
    static let second: Int64 = 1_000_000_000
    static let policy = RecoveryLadder.Policy(
        stallAfter: 60 * second, stepGrace: 10 * second, backoffBase: 300 * second, backoffCap: 1_200 * second)

    /// Runs the ladder from `start` to `end` seconds, one evaluation a second, with adverts heard at `heard`.
    static func run(
        _ ladder: inout RecoveryLadder, from start: Int, to end: Int, heard: Set<Int> = [], lastHeard initial: Int = 0
    ) -> [(Int, RecoveryLadder.Event)] {
        var lastHeard = Int64(initial) * second
        var events: [(Int, RecoveryLadder.Event)] = []
        for now in start...end {
            if heard.contains(now) { lastHeard = Int64(now) * second }
            for event in ladder.evaluate(now: Int64(now) * second, lastHeard: lastHeard) { events.append((now, event)) }
        }
        return events
    }

    @Test func steadyAdvertsNeverTriggerAnything() {
        var ladder = RecoveryLadder(policy: Self.policy)
        let events = Self.run(&ladder, from: 0, to: 3_600, heard: Set(stride(from: 0, through: 3_600, by: 59)))
        #expect(events.isEmpty)
        #expect(ladder.state == .watching)
    }

    @Test func aStallClimbsOneStepPerGraceThenRests() {
        var ladder = RecoveryLadder(policy: Self.policy)
        let events = Self.run(&ladder, from: 0, to: 100)
        #expect(events.map(\.0) == [60, 60, 70, 80, 90, 100])
        #expect(
            events.map(\.1) == [
                .stalled(silentFor: 60 * Self.second), .take(.rescan), .take(.powerCycle), .take(.resetDevice),
                .take(.rfkillUnblock),
                .gaveUp(restFor: 300 * Self.second),
            ])
        #expect(ladder.state == .resting(until: 400 * Self.second))
        #expect(ladder.taken == [1, 1, 1, 1])
    }

    @Test func advertsAfterAStepEndTheLadderThere() {
        var ladder = RecoveryLadder(policy: Self.policy)
        let events = Self.run(&ladder, from: 0, to: 134, heard: [75])
        #expect(
            events.map(\.1) == [
                .stalled(silentFor: 60 * Self.second), .take(.rescan), .take(.powerCycle),
                .recovered(after: .powerCycle),
            ])
        #expect(events.last?.0 == 75)
        #expect(ladder.state == .watching)
        #expect(ladder.recoveries == 1)
        // Watching again: the next stall is a full stall time after the advert, not sooner.
        #expect(
            Self.run(&ladder, from: 135, to: 135, lastHeard: 75).map(\.1) == [
                .stalled(silentFor: 60 * Self.second), .take(.rescan),
            ])
    }

    @Test func aQuietCafeCostsFewerLaddersAsTheNightGoesOn() {
        var ladder = RecoveryLadder(policy: Self.policy)
        let events = Self.run(&ladder, from: 0, to: 8 * 3_600)
        let starts = events.filter { $0.1 == .take(.rescan) }.map(\.0)
        // 60 s stall, then each ladder takes 40 s (four steps, 10 s each) and rests 300, 600, 1200, 1200… seconds.
        #expect(starts.prefix(5) == [60, 400, 1_040, 2_280, 3_520])
        #expect(starts.count == 25)
        let rests = events.compactMap { if case .gaveUp(let rest) = $0.1 { rest / Self.second } else { nil } }
        #expect(rests.prefix(4) == [300, 600, 1_200, 1_200])
        #expect(ladder.recoveries == 0)
    }

    @Test func advertsWhileRestingResetTheBackoff() {
        var ladder = RecoveryLadder(policy: Self.policy)
        _ = Self.run(&ladder, from: 0, to: 1_100)  // two failed ladders: backoff is now 1200 s
        #expect(ladder.backoff == 1_200 * Self.second)
        let events = Self.run(&ladder, from: 1_101, to: 1_200, heard: [1_150])
        #expect(events.map(\.1) == [.recovered(after: nil)])
        #expect(ladder.backoff == 300 * Self.second)
        #expect(ladder.state == .watching)
    }

    @Test func theDaemonPolicyScalesWithTheStallTime() {
        let short = RecoveryLadder.Policy.seconds(stallAfter: 3)
        #expect(short.stepGrace == 3 * Self.second && short.backoffBase == 60 * Self.second)
        let long = RecoveryLadder.Policy.seconds(stallAfter: 120)
        #expect(
            long.stepGrace == 15 * Self.second && long.backoffBase == 120 * Self.second
                && long.backoffCap == 3_600 * Self.second)
    }
}

extension RecoveryLadderTests {
    @Test func theNextDecisionIsWhenEvaluateWouldAct() {
        var ladder = RecoveryLadder(policy: Self.policy)
        #expect(ladder.nextDecision(lastHeard: 5 * Self.second) == 65 * Self.second)
        #expect(ladder.evaluate(now: 65 * Self.second - 1, lastHeard: 5 * Self.second).isEmpty)
        #expect(!ladder.evaluate(now: 65 * Self.second, lastHeard: 5 * Self.second).isEmpty)
        #expect(ladder.nextDecision(lastHeard: 5 * Self.second) == 75 * Self.second)
        _ = Self.run(&ladder, from: 66, to: 105, lastHeard: 5)
        #expect(ladder.state == .resting(until: 405 * Self.second))
        #expect(ladder.nextDecision(lastHeard: 5 * Self.second) == 405 * Self.second)
    }
}
