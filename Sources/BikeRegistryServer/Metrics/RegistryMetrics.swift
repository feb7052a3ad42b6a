import BikeRegistryCore
public import BikeRegistryStore
import HTTPTypes
import NIOConcurrencyHelpers
import Prometheus

/// What the registry counts as it works, for its operator's Prometheus (`serve --metrics-listen`): requests by route
/// and status, sightings and notifications by outcome, the store's operations, the limits' refusals. Each is counted
/// where it happens, once, and read by a scrape; what the database holds (bikes, messages owed, stations' last
/// refresh) is read when scraped instead (`RegistryFigures`).
///
/// Names and units follow Prometheus's naming guide and OpenTelemetry's HTTP conventions: base units (seconds,
/// bytes), `_total` on counters, `http_server_request_duration_seconds` with `method`, `route` and `status`. Every
/// label value comes from a set the server fixes (its routes, methods, channels, outcomes, limits, the operator's
/// station names), never from what a client sends: no owner, token, address, webhook host or beacon is in a name or
/// a label.
public final class RegistryMetrics: Sendable {
    /// The series counted as they happen; a scrape adds those it reads (`RegistryFigures.emit`).
    let registry: PrometheusCollectorRegistry
    /// The request histogram of each method, route and status seen, so that recording one costs a lookup here and
    /// the histogram's own lock, not the collector registry's label matching.
    private let requestSeries = NIOLockedValueBox([RequestSeries: DurationHistogram]())
    private let requestsInFlight: Gauge
    private let storeInFlight: Gauge
    /// The series of what every request or operation may count, made once: counting one then takes no lock of the
    /// collector registry's.
    private let sightingCounts: [SightingOutcome: Counter]
    private let storeDurations: [StoreOperation: DurationHistogram]
    private let storeErrors: [StoreFailure: Counter]

    private struct RequestSeries: Hashable {
        var method: String
        var route: String
        var status: Int
    }

    public init(version: String) {
        let registry = PrometheusCollectorRegistry()
        self.registry = registry
        requestsInFlight = registry.makeGauge(descriptor: Self.requestsInFlightName)
        storeInFlight = registry.makeGauge(descriptor: Self.storeInFlightName)
        registry.makeGauge(descriptor: Self.buildInfo, labels: [("version", version)]).set(to: 1)
        sightingCounts = Dictionary(
            uniqueKeysWithValues: SightingOutcome.allCases.map { outcome in
                (outcome, registry.makeCounter(descriptor: Self.sightings, labels: [("outcome", outcome.rawValue)]))
            })
        storeDurations = Dictionary(
            uniqueKeysWithValues: StoreOperation.allCases.map { operation in
                (
                    operation,
                    registry.makeDurationHistogram(
                        descriptor: Self.storeDuration, labels: [("operation", operation.rawValue)],
                        buckets: Self.storeBuckets)
                )
            })
        storeErrors = Dictionary(
            uniqueKeysWithValues: StoreFailure.allCases.map { kind in
                (kind, registry.makeCounter(descriptor: Self.storeErrorsName, labels: [("kind", kind.rawValue)]))
            })
    }

    /// Every channel's and every limit's counts shown from 0, so that a rate or an increase over the first one is
    /// seen (Prometheus cannot know a series that appears at 1 was 0 before).
    func expect(channels: [NotificationChannel], limits: [String]) {
        for channel in channels {
            for outcome in Self.deliveryOutcomes {
                _ = registry.makeCounter(
                    descriptor: Self.notifications, labels: [("channel", channel.rawValue), ("outcome", outcome)])
            }
        }
        for limit in limits { _ = registry.makeCounter(descriptor: Self.limitRefusals, labels: [("limit", limit)]) }
    }

    // MARK: Requests

    /// The request's route label: its template as the router matched it, or one value for every path none matched.
    static let unmatchedRoute = "unmatched"

    func requestStarted() { requestsInFlight.increment() }

    func requestEnded(method: HTTPRequest.Method, route: String?, status: Int, after duration: Duration) {
        requestsInFlight.decrement()
        record(method: method, route: route, status: status, after: duration)
    }

    /// One request answered.
    func record(method: HTTPRequest.Method, route: String?, status: Int, after duration: Duration) {
        let series = RequestSeries(
            method: Self.methodLabel(method), route: route ?? Self.unmatchedRoute, status: status)
        let histogram = requestSeries.withLockedValue { known in
            if let histogram = known[series] { return histogram }
            let histogram = registry.makeDurationHistogram(
                descriptor: Self.requestDuration,
                labels: [("method", series.method), ("route", series.route), ("status", String(series.status))],
                buckets: Self.requestBuckets)
            known[series] = histogram
            return histogram
        }
        histogram.record(duration)
    }

    /// HTTP's registered methods by name, and `_OTHER` for any other (OpenTelemetry's rule): a client makes up
    /// methods as freely as paths.
    static func methodLabel(_ method: HTTPRequest.Method) -> String {
        switch method {
        case .get, .head, .post, .put, .patch, .delete, .options, .trace, .connect: method.rawValue
        default: "_OTHER"
        }
    }

    // MARK: Sightings, notifications, limits

    /// What became of a posted sighting, one outcome each, the first that holds in this order.
    enum SightingOutcome: String, CaseIterable {
        /// Refused with a 4xx: no key, a bad body, the key's rate passed.
        case refused
        /// Its id was stored already (a station's retry).
        case duplicate
        /// A rotating beacon's bike, the identity heard not its beacon's in its window: stored, owing nothing.
        case unverifiedRotating = "unverified_rotating"
        /// Stored with the time it was received, the station's times not believed (`StationClockCheck`).
        case clockNotBelieved = "clock_not_believed"
        case stored
    }

    func sighting(_ outcome: SightingOutcome) { sightingCounts[outcome]?.increment() }

    /// One delivery attempt on `channel`, what the domain made of it, and how long the attempt took.
    func delivery(channel: NotificationChannel, outcome: NotificationOutcome, after duration: Duration) {
        let outcome =
            switch outcome {
            case .delivered: Self.deliveryOutcomes[0]
            case .retry: Self.deliveryOutcomes[1]
            case .refused: Self.deliveryOutcomes[2]
            case .abandon: Self.deliveryOutcomes[3]
            }
        registry.makeCounter(
            descriptor: Self.notifications, labels: [("channel", channel.rawValue), ("outcome", outcome)]
        ).increment()
        registry.makeDurationHistogram(
            descriptor: Self.deliveryDuration, labels: [("channel", channel.rawValue)], buckets: Self.deliveryBuckets
        ).record(duration)
    }

    /// A delivery's outcomes as labels: delivered, retried, refused (for good), abandoned (after three days).
    static let deliveryOutcomes = ["delivered", "retried", "refused", "abandoned"]

    /// A request refused by the limit of this name (`CountLimit.name`, or a credential's rate).
    func refused(by limit: String) {
        registry.makeCounter(descriptor: Self.limitRefusals, labels: [("limit", limit)]).increment()
    }

    /// The stations' list encoded once more (a new version, a window moved).
    func listEncoded() { registry.makeCounter(descriptor: Self.listEncodings).increment() }
}

extension RegistryMetrics: StoreObserver {
    public func began(_ operation: StoreOperation) { storeInFlight.increment() }

    public func ended(_ operation: StoreOperation, after duration: Duration, failure: StoreFailure?) {
        storeInFlight.decrement()
        storeDurations[operation]?.record(duration)
        if let failure { storeErrors[failure]?.increment() }
    }
}

extension RegistryMetrics {
    /// The page a scrape gets: what was counted, then what `figures` read.
    func page(_ figures: RegistryFigures) -> [UInt8] {
        var page = registry.emitToBuffer()
        let sampled = PrometheusCollectorRegistry()
        figures.emit(into: sampled)
        sampled.emit(into: &page)
        return page
    }
}
