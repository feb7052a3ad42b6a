import BikeRegistryCore
import Foundation
import Testing

/// What listening and silent mean, for the metrics, `status` and the shipped alert alike.
@Suite(.timeLimit(.minutes(1))) struct StationActivityTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func aStationListensForAnHourAfterAFetchAndIsNewsForADay() {
        func ago(_ seconds: TimeInterval) -> Date { Self.now.addingTimeInterval(-seconds) }
        #expect(StationActivity.isListening(lastRefresh: ago(0), now: Self.now))
        #expect(StationActivity.isListening(lastRefresh: ago(3_599), now: Self.now))
        #expect(!StationActivity.isListening(lastRefresh: ago(3_600), now: Self.now))
        #expect(!StationActivity.isListening(lastRefresh: nil, now: Self.now), "never fetched: silent")
        #expect(!StationActivity.wentSilent(lastRefresh: ago(3_599), now: Self.now))
        #expect(StationActivity.wentSilent(lastRefresh: ago(3_600), now: Self.now))
        #expect(StationActivity.wentSilent(lastRefresh: ago(86_399), now: Self.now))
        #expect(!StationActivity.wentSilent(lastRefresh: ago(86_400), now: Self.now), "a day on, gone: no longer news")
        #expect(!StationActivity.wentSilent(lastRefresh: nil, now: Self.now), "never listened: nothing went silent")
        #expect(
            StationActivity.isListening(lastRefresh: ago(-60), now: Self.now), "a clock a minute ahead still listens")
    }
}
