public import Foundation

/// Whether a station is listening, by its last fetch of the list: what the metrics' station states, `bike-registry
/// status` and the shipped alert `BikeRegistryStationSilent` all mean by it. A station fetches every five minutes
/// by default, so an hour without one is a station off, offline or failing.
public enum StationActivity {
    /// A station that fetched the list within this is listening; any other is silent.
    public static let listening: TimeInterval = 3_600
    /// A station silent for longer than this is taken to be gone for good, and is no longer news.
    public static let gone: TimeInterval = 86_400

    public static func isListening(lastRefresh: Date?, now: Date) -> Bool {
        lastRefresh.map { now.timeIntervalSince($0) < listening } ?? false
    }

    /// Listened within the day but not within the hour: a café to call.
    public static func wentSilent(lastRefresh: Date?, now: Date) -> Bool {
        guard let lastRefresh else { return false }
        let silence = now.timeIntervalSince(lastRefresh)
        return silence >= listening && silence < gone
    }
}
