public import BeaconControl
public import BeaconEngine
public import BeaconWire
import LockedValue
import Prometheus

/// What one scrape reads: the daemon's status, and what `status` shows only in part (the engine's sightings by kind
/// since the start, every drop reason).
public struct MetricsSample: Sendable {
    public var report: StatusReport
    public var sightings: EngineCounters
    public var drops: DropCounts
    public var startedAtSeconds: Double

    public init(report: StatusReport, sightings: EngineCounters, drops: DropCounts, startedAtSeconds: Double) {
        self.report = report
        self.sightings = sightings
        self.drops = drops
        self.startedAtSeconds = startedAtSeconds
    }
}

/// The daemon's state in Prometheus's text format, for `/metrics` (`metrics-listen`).
///
/// Nothing is counted as it happens: each scrape sets every series from a `MetricsSample`, so the capture and
/// engine loops pay nothing for metrics and a daemon nobody scrapes does no work for them. The counters mirror
/// totals the daemon keeps anyway (a restart starts them again, as Prometheus expects of counters).
///
/// Names follow Prometheus's conventions: the `beacond_` prefix, base units (seconds), `_total` on counters,
/// `beacond_build_info`. Labels name a sink, a drop reason, a sighting's kind or the version; never a bike, a beacon
/// or an advertiser's address.
public final class DaemonMetrics: Sendable {
    private let registry = PrometheusCollectorRegistry()
    /// One scrape at a time: each sets every series, then emits them all.
    private let scrape = LockedValue(())
    private let version: String

    public init(version: String) {
        self.version = version
        registry.makeGauge(
            descriptor: Self.describe("beacond_build_info", "Always 1; the label says which beacond this is."),
            labels: [("version", version)]
        ).set(to: 1.0)
    }

    /// The text a scrape gets.
    public func exposition(_ sample: MetricsSample) -> [UInt8] {
        scrape.withLock { _ in
            set(sample)
            return registry.emitToBuffer()
        }
    }

    private func set(_ sample: MetricsSample) {
        setHealth(sample)
        setCapture(sample)
        setSightings(sample)
        setOutbox(sample.report)
    }

    private func setHealth(_ sample: MetricsSample) {
        let report = sample.report
        gauge("beacond_start_time_seconds", "When the daemon started, in seconds since the Unix epoch.").set(
            to:
                sample.startedAtSeconds)
        gauge("beacond_healthy", "1 when nothing needs a person (beacond status lists the problems), else 0.").set(
            to:
                report.healthy ? 1 : 0)
        gauge("beacond_stuck", "1 when the daemon's own loops cannot go on (what a restart may mend), else 0.").set(
            to:
                report.stuck ? 1 : 0)
        gauge("beacond_clock_synchronized", "1 when the system clock is synchronised, else 0.").set(
            to:
                report.clockSynchronized == false ? 0 : 1)
    }

    private func setCapture(_ sample: MetricsSample) {
        let report = sample.report
        gauge("beacond_capture_running", "1 while capture runs, else 0.").set(
            to: report.capture.state == "running" ? 1 : 0)
        counter("beacond_adverts_received_total", "Advertising reports captured, of any kind.", report.capture.adverts)
        counter(
            "beacond_ibeacon_adverts_received_total", "iBeacon adverts captured and handed to the engine.",
            report.capture.iBeacons)
        let dropped = "Input dropped before the engine, by reason (ring_overwritten: the engine fell behind)."
        counter("beacond_adverts_dropped_total", dropped, report.capture.ringDrops, [("reason", "ring_overwritten")])
        for reason in DropReason.allCases where sample.drops[reason] > 0 {
            counter("beacond_adverts_dropped_total", dropped, sample.drops[reason], [("reason", reason.metricLabel)])
        }
        counter(
            "beacond_capture_recoveries_total", "Steps of the stall-recovery ladder taken (rescan, power-cycle, …).",
            UInt64(report.capture.recoveries))
        gauge("beacond_ring_adverts", "Adverts captured and not yet read by the engine.").set(
            to:
                Double(report.capture.ringDepth))
        optionalGauge(
            "beacond_station_beacon_silence_seconds", "Seconds since the station's own beacon was last heard.",
            report.capture.stationBeacon?.silentSeconds)
    }

    /// The engine and its missing set.
    private func setSightings(_ sample: MetricsSample) {
        let report = sample.report
        let sightings = "Sightings made, by kind (enter, update, exit)."
        counter("beacond_sightings_total", sightings, UInt64(sample.sightings.enters), [("kind", "enter")])
        counter("beacond_sightings_total", sightings, UInt64(sample.sightings.updates), [("kind", "update")])
        counter("beacond_sightings_total", sightings, UInt64(sample.sightings.exits), [("kind", "exit")])
        gauge("beacond_open_visits", "Missing bikes in range now.").set(to: Double(report.sightings.openVisits))
        gauge("beacond_missing_bikes", "Bikes in the missing set the daemon matches against.").set(
            to:
                Double(report.missingSet.size))
        optionalGauge(
            "beacond_missing_set_age_seconds", "Age of the missing set, since the registry last sent it.",
            report.missingSet.ageSeconds)
    }

    /// The outbox, and each sink alike (the registry's own counters stay, for the dashboards made before sinks).
    private func setOutbox(_ report: StatusReport) {
        for sink in report.outbox.sinks ?? [] {
            counter(
                "beacond_sink_sightings_delivered_total", "Sightings a sink has taken since the start.",
                UInt64(sink.delivered ?? 0), [("sink", sink.name)])
            counter(
                "beacond_sink_delivery_retries_total", "Attempts to deliver to a sink that failed and are tried again.",
                UInt64(sink.retries ?? 0), [("sink", sink.name)])
            gauge(
                "beacond_sink_held", "1 while a sink takes no sighting at all (beacond status says why).",
                [
                    ("sink", sink.name)
                ]
            ).set(to: sink.held == nil ? 0 : 1)
            gauge("beacond_outbox_sightings", "Sightings a sink is still owed.", [("sink", sink.name)]).set(
                to:
                    Double(sink.depth))
            gauge(
                "beacond_outbox_dead_letters", "Sightings a sink refused for good (beacond retry-dead-letters).",
                [("sink", sink.name)]
            ).set(to: Double(sink.deadLetters))
        }
        optionalGauge(
            "beacond_outbox_oldest_sighting_age_seconds", "Age of the oldest sighting still owed to a sink.",
            report.outbox.oldestAgeSeconds)
        gauge(
            "beacond_outbox_uncommitted_sightings", "Sightings held in memory because the outbox cannot take them."
        ).set(to: Double(report.outbox.uncommitted))
        counter(
            "beacond_outbox_evicted_sightings_total", "Sightings evicted undelivered from a full outbox.",
            UInt64(report.outbox.evicted))
        counter(
            "beacond_registry_sightings_delivered_total", "Sightings the registry has accepted since the start.",
            UInt64(report.outbox.delivered))
        counter(
            "beacond_registry_post_retries_total", "Posts to the registry that failed and are tried again.",
            UInt64(report.outbox.retries))
    }

    private func gauge(_ name: String, _ help: String, _ labels: [(String, String)] = []) -> Gauge {
        registry.makeGauge(descriptor: Self.describe(name, help), labels: labels)
    }

    /// A name as it appears on the page (these are written out whole, to be found by grep), and its help.
    private static func describe(_ name: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "beacond", metricName: String(name.dropFirst("beacond_".count)), unitName: "", helpText: help)
    }

    /// A value the daemon may not have (no missing set yet, no station beacon): absent from the page until it has.
    private func optionalGauge(_ name: String, _ help: String, _ value: Double?) {
        let series = gauge(name, help)
        if let value { series.set(to: value) } else { registry.unregisterGauge(series) }
    }

    /// A counter set to a total the daemon keeps.
    private func counter(_ name: String, _ help: String, _ total: UInt64, _ labels: [(String, String)] = []) {
        let series = registry.makeCounter(descriptor: Self.describe(name, help), labels: labels)
        series.reset()
        series.increment(by: Int64(clamping: total))
    }
}

extension DropReason {
    /// The reason as a label value.
    var metricLabel: String {
        switch self {
        case .truncatedRecord: "truncated_record"
        case .corruptRecord: "corrupt_record"
        case .unknownLinkType: "unknown_link_type"
        case .unknownInterface: "unknown_interface"
        case .badHexLine: "bad_hex_line"
        case .badPacketType: "bad_packet_type"
        case .truncatedEvent: "truncated_event"
        case .reportPastEvent: "report_past_event"
        case .badReportLength: "bad_report_length"
        case .badADStructure: "bad_ad_structure"
        case .malformedIBeacon: "malformed_ibeacon"
        }
    }
}
