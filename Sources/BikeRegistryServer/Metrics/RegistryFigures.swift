import BikeRegistryCore
import BikeRegistryStore
import Foundation
import Prometheus

/// What a scrape reads rather than counts: readiness, the database's counts (`RegistryStore.operatorFigures`), each
/// station's last refresh and sighting, the list held in memory. Read at most once a second however often the
/// listener is asked (`RegistryMetrics.figures`). Where the database cannot be read, its series are left out and the
/// page says not ready; the counted series are still there.
struct RegistryFigures: Sendable {
    var ready: Bool
    var connections: Int
    var primaryHost: String?
    var database: OperatorFigures?
    /// Unrevoked stations.
    var stations: [Station]?
    var list: RegistrySnapshot.Held?
    var now: Date

    static func read(
        database: any RegistryStore, readiness: Readiness, snapshot: RegistrySnapshot, connections: Int, now: Date
    ) async -> RegistryFigures {
        let ready = await readiness.answer(database) == .ready
        let figures = try? await database.operatorFigures()
        let stations = try? await database.stations().filter { $0.revokedAt == nil }
        return RegistryFigures(
            ready: ready, connections: connections, primaryHost: database.primaryHost, database: figures,
            stations: stations, list: snapshot.held(), now: now)
    }

    func emit(into registry: PrometheusCollectorRegistry) {
        func gauge(_ name: MetricNameDescriptor, _ value: Double, _ labels: [(String, String)] = []) {
            registry.makeGauge(descriptor: name, labels: labels).set(to: value)
        }
        func counter(_ name: MetricNameDescriptor, _ value: Int) {
            registry.makeCounter(descriptor: name).increment(by: Int64(value))
        }
        gauge(RegistryMetrics.ready, ready ? 1 : 0)
        gauge(RegistryMetrics.storeConnections, Double(connections))
        if let primaryHost { gauge(RegistryMetrics.primary, 1, [("host", primaryHost)]) }
        if let list {
            gauge(RegistryMetrics.listBytes, Double(list.bytes), [("encoding", "identity")])
            gauge(RegistryMetrics.listBytes, Double(list.gzippedBytes), [("encoding", "gzip")])
            gauge(RegistryMetrics.listIdentities, Double(list.identities))
        }
        if let database {
            gauge(RegistryMetrics.bikes, Double(database.bikes))
            gauge(RegistryMetrics.missingBikes, Double(database.missingBikes))
            counter(RegistryMetrics.reportsMade, database.reportsMade)
            counter(RegistryMetrics.reportsLapsed, database.reportsLapsed)
            for (channel, targets) in database.failingTargets.sorted(by: { $0.key < $1.key }) {
                gauge(RegistryMetrics.failingTargets, Double(targets), [("channel", channel)])
            }
            for owed in database.owed {
                gauge(RegistryMetrics.owed, Double(owed.messages), [("channel", owed.channel)])
                if let oldest = owed.oldest {
                    gauge(
                        RegistryMetrics.oldestOwed, max(0, now.timeIntervalSince(oldest)), [("channel", owed.channel)])
                }
            }
        }
        if let stations { emit(stations, into: registry) }
    }

    private func emit(_ stations: [Station], into registry: PrometheusCollectorRegistry) {
        var listening = 0
        for station in stations {
            let labels = [("station", station.name)]
            if let refreshed = station.lastRefreshAt {
                registry.makeGauge(descriptor: RegistryMetrics.lastRefresh, labels: labels)
                    .set(to: refreshed.timeIntervalSince1970)
                if StationActivity.isListening(lastRefresh: refreshed, now: now) { listening += 1 }
            }
            if let sighted = station.lastSightingAt {
                registry.makeGauge(descriptor: RegistryMetrics.lastSighting, labels: labels)
                    .set(to: sighted.timeIntervalSince1970)
            }
        }
        registry.makeGauge(descriptor: RegistryMetrics.stations, labels: [("state", "listening")])
            .set(to: Double(listening))
        registry.makeGauge(descriptor: RegistryMetrics.stations, labels: [("state", "silent")])
            .set(to: Double(stations.count - listening))
    }
}
