import BeaconEngine
import BeaconTestSupport
import DaemonSupport
import Testing

@testable import BeaconRegistryClient

/// The refresher's decisions alone (`RefreshPolicy`): which lists are taken, and the wait before each refresh.
@Suite(.timeLimit(.minutes(20))) struct RefreshPolicyTests {
    /// A list's statistics as the reader leaves them: `missing` good entries and `rejected` bad ones.
    static func statistics(missing: Int, rejected: Int) -> MissingBikeSet.Statistics {
        var builder = MissingBikeSet.Builder(regions: [.findMyBike])
        for minor in 0..<missing {
            builder.add(BikeList.Entry(id: "bike-\(minor)", minor: UInt16(minor), missing: true))
        }
        for _ in 0..<rejected { builder.reject(.badMinor) }
        return builder.build().statistics
    }

    @Test func aMostlyUnusableListIsRefusedWhileAListIsInUseAndTakenWhenNone() {
        #expect(RefreshPolicy.verdict(on: Self.statistics(missing: 10, rejected: 10), kept: 5) == .take(note: nil))
        #expect(
            RefreshPolicy.verdict(on: Self.statistics(missing: 9, rejected: 11), kept: 5)
                == .refuse(
                    "the registry's list had 11 of its 20 entries unusable; the previous list of 5 bikes is kept"))
        #expect(
            RefreshPolicy.verdict(on: Self.statistics(missing: 9, rejected: 11), kept: 0)
                == .take(note: "the registry's list had 11 of its 20 entries unusable; taken, as there was no list yet")
        )
        #expect(RefreshPolicy.verdict(on: Self.statistics(missing: 0, rejected: 0), kept: 5) == .take(note: nil))
    }

    @Test func successesWaitTheJitteredIntervalAndFailuresADoublingBackoff() {
        var policy = RefreshPolicy(
            interval: .seconds(300), jitter: 0.2, backoff: Backoff(base: .seconds(10), cap: .seconds(1_800)))
        var random = SeededRandom(state: 5)
        for _ in 0..<50 {
            let wait = policy.delay(afterSuccess: true, using: &random)
            #expect(wait >= .seconds(240) && wait <= .seconds(360))
        }
        let failures = (0..<4).map { _ in policy.delay(afterSuccess: false, using: &random) }
        for (wait, window) in zip(failures, [10, 20, 40, 80]) {
            #expect(wait >= .seconds(window) / 2 && wait <= .seconds(window), "\(wait) outside its window \(window) s")
        }
        _ = policy.delay(afterSuccess: true, using: &random)
        #expect(policy.delay(afterSuccess: false, using: &random) <= .seconds(10), "a success starts the backoff again")
    }
}
