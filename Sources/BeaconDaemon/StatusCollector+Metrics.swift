import BeaconMetrics
import BeaconWire

extension StatusCollector {
    /// What one scrape of `/metrics` reads.
    func metricsSample() -> MetricsSample {
        MetricsSample(
            report: report(), sightings: engine.current.counters, drops: capture.current.decode.drops,
            startedAtSeconds: Double(startedAt) / 1000)
    }
}
