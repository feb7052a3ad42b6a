import BikeRegistryCore
import BikeRegistryStore
import Foundation

/// What `bike-registry status` shows, read from the running server's metrics page or, without one, from the
/// database: the same shape either way, so the two cannot say different things of the same registry.
struct RegistryStatus {
    /// Where it was read: `metrics at HOST:PORT`, or the database's location.
    var source: String
    /// Whether the server says it is ready; nil when read from the database, which cannot say.
    var ready: Bool?
    var version: String?
    /// The PostgreSQL host operations go to; nil for SQLite (or when unknown).
    var primary: String?
    var bikes: Int?
    var missingBikes: Int?
    var listBytes: Int?
    var owed: [String: (messages: Int, oldestSeconds: Double?)] = [:]
    var failingTargets: [String: Int] = [:]
    /// Delivery attempts by channel and outcome since the server started (from its metrics only).
    var attempts: [String: [String: Int]] = [:]
    /// Every unrevoked station by its last fetch; from a server's page, those that have fetched or sighted only.
    var stations: [StationState] = []
    /// How many stations are listening and silent, every unrevoked one counted.
    var listening = 0
    var silent = 0
    var now: Date

    struct StationState {
        var name: String
        var lastRefresh: Date?
        var lastSighting: Date?
    }

    /// Messages owed past this are a problem (the alert `BikeRegistryNotificationsOwed`'s figure).
    static let owedTooLong: TimeInterval = 600

    func isListening(_ station: StationState) -> Bool {
        StationActivity.isListening(lastRefresh: station.lastRefresh, now: now)
    }

    /// What needs the operator, one line each; none when all is well.
    var problems: [String] {
        var problems: [String] = []
        if ready == false {
            problems.append("the server is not ready (its database does not take writes, or it is stopping)")
        }
        for (channel, owed) in owed.sorted(by: { $0.key < $1.key }) {
            if let oldest = owed.oldestSeconds, oldest > Self.owedTooLong {
                problems.append("\(channel): messages owed for \(Self.readable(oldest))")
            }
        }
        for (channel, targets) in failingTargets.sorted(by: { $0.key < $1.key }) where targets > 0 {
            problems.append("\(channel): \(targets) targets refused for good")
        }
        for station in stations where StationActivity.wentSilent(lastRefresh: station.lastRefresh, now: now) {
            if let refreshed = station.lastRefresh {
                problems.append("\(station.name): silent for \(Self.readable(now.timeIntervalSince(refreshed)))")
            }
        }
        return problems
    }

    static func readable(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded())
        if whole < 120 { return "\(whole) s" }
        if whole < 7_200 { return "\(whole / 60) min" }
        if whole < 2 * 86_400 { return "\(whole / 3_600) h \(whole % 3_600 / 60) min" }
        return "\(whole / 86_400) d"
    }
}

extension RegistryStatus {
    /// From the running server's page (`serve --metrics-listen`).
    init(samples: [MetricSample], source: String, now: Date) {
        self.init(source: source, now: now)
        func value(_ name: String) -> Double? { samples.first { $0.name == name }?.value }
        ready = value("bike_registry_ready").map { $0 == 1 }
        version = samples.first { $0.name == "bike_registry_build_info" }?.labels["version"]
        primary = samples.first { $0.name == "bike_registry_store_primary" && $0.value == 1 }?.labels["host"]
        bikes = value("bike_registry_bikes").map { Int($0) }
        missingBikes = value("bike_registry_missing_bikes").map { Int($0) }
        listBytes = samples.first {
            $0.name == "bike_registry_station_list_bytes" && $0.labels["encoding"] == "identity"
        }.map { Int($0.value) }
        var stations: [String: StationState] = [:]
        for sample in samples {
            let channel = sample.labels["channel"] ?? ""
            switch sample.name {
            case "bike_registry_notifications_owed":
                owed[channel, default: (0, nil)].messages = Int(sample.value)
            case "bike_registry_notifications_oldest_owed_age_seconds":
                owed[channel, default: (0, nil)].oldestSeconds = sample.value
            case "bike_registry_stations":
                if sample.labels["state"] == "listening" {
                    listening = Int(sample.value)
                } else {
                    silent = Int(sample.value)
                }
            case "bike_registry_notification_targets_failing":
                failingTargets[channel] = Int(sample.value)
            case "bike_registry_notifications_total":
                attempts[channel, default: [:]][sample.labels["outcome"] ?? "", default: 0] += Int(sample.value)
            case "bike_registry_station_last_refresh_timestamp_seconds",
                "bike_registry_station_last_sighting_timestamp_seconds":
                guard let name = sample.labels["station"] else { continue }
                let date = Date(timeIntervalSince1970: sample.value)
                if sample.name.contains("refresh") {
                    stations[name, default: StationState(name: name)].lastRefresh = date
                } else {
                    stations[name, default: StationState(name: name)].lastSighting = date
                }
            default: continue
            }
        }
        self.stations = stations.values.sorted { $0.name < $1.name }
    }

    /// From the database, with no server to ask: everything but readiness and the attempts since a server started.
    init(figures: OperatorFigures, stations: [Station], source: String, primary: String?, now: Date) {
        self.init(source: source, now: now)
        self.primary = primary
        bikes = figures.bikes
        missingBikes = figures.missingBikes
        for owed in figures.owed {
            self.owed[owed.channel] = (owed.messages, owed.oldest.map { now.timeIntervalSince($0) })
        }
        failingTargets = figures.failingTargets
        self.stations = stations.filter { $0.revokedAt == nil }.map {
            StationState(name: $0.name, lastRefresh: $0.lastRefreshAt, lastSighting: $0.lastSightingAt)
        }
        listening = self.stations.filter(isListening).count
        silent = self.stations.count - listening
    }
}

extension RegistryStatus.StationState {
    init(name: String) { self.init(name: name, lastRefresh: nil, lastSighting: nil) }
}
