public import BeaconControl
import BeaconDelivery
import BeaconEngine
import BeaconOutbox
import BeaconPOSIX
import BeaconRegistryClient
import BeaconWire

#if canImport(Glibc)
import Glibc
#endif

/// Gathers the daemon's parts into a `StatusReport` and decides whether the daemon is healthy, and whether it is
/// stuck: the watchdog's question, which only the daemon's own loops answer (see `StatusReport.stuck`).
public struct StatusCollector: Sendable {
    let version: String
    let startedAt: Int64
    let startedMonotonic: Int64
    let clock: StationClock
    let capture: CaptureStatus
    let engine: EngineStatus
    let refresher: @Sendable () -> RegistrySyncStatus
    /// Each sink's delivery so far, the registry's first.
    let delivery: @Sendable () -> [(sink: SinkID, statistics: PosterStatistics)]
    let outbox: Outbox
    let stationBeacon: BeaconIdentity?
    /// Live capture's clocks (its times are monotonic); nil for a replay.
    let clocks: (@Sendable () -> ClockReading)?
    /// An engine that has not ticked for this long is stuck.
    let engineStall: Int64 = 10_000_000_000

    public func report() -> StatusReport {
        let wall = clock.wallMilliseconds()
        let monotonic = clock.monotonicNanoseconds()
        let capture = capture.current
        let engine = engine.current
        let sync = refresher()
        let delivery = delivery()
        let posting = delivery.first { $0.sink == .registry }?.statistics ?? PosterStatistics()
        let queue = readOutbox(wall: wall)
        let clock = clocks?()
        let stuck = self.problems(capture: capture, engine: engine, monotonic: monotonic)
        let problems = stuck + Self.registryProblems(sync: sync, posting: posting, now: wall)
        var warnings = Self.warnings(sync: sync, deadLetters: queue.statistics.deadLetters)
        if clock?.synchronized == false {
            let waiting = (try? outbox.pendingTimes()) ?? 0
            warnings.append(
                "the system clock is not synchronised (NTP has not set it yet): \(waiting) sighting\(waiting == 1 ? "" : "s") wait for it "
                    + "before they are sent")
        }
        return StatusReport(
            version: version, pid: getpid(), startedAt: Self.iso(startedAt),
            uptimeSeconds: Double(monotonic - startedMonotonic) / 1e9, healthy: problems.isEmpty, problems: problems,
            stuck: !stuck.isEmpty, warnings: warnings, clockSynchronized: clock.map { $0.synchronized } ?? true,
            capture: captureSection(capture, engine, clock: clock),
            missingSet: Self.missingSetSection(sync, wall: wall),
            outbox: outboxSection(queue, engine, posting: posting, delivery: delivery, wall: wall),
            sightings: StatusReport.Sightings(
                today: queue.journal.count, openVisits: engine.openVisits,
                recent: queue.journal.recent.map { entry in
                    StatusReport.Recent(
                        time: Self.iso(entry.seenAt), kind: entry.kind.rawValue, bikeId: entry.bikeID, rssi: entry.rssi,
                        proximity: entry.proximity, delivery: entry.delivery.rawValue)
                }))
    }

    /// What the outbox says for a report: its counts and today's journal, and the first error reading either.
    private struct OutboxReading {
        var statistics = OutboxStatistics()
        var journal: (count: Int, recent: [JournalEntry]) = (0, [])
        var error: String?
    }

    private func readOutbox(wall: Int64) -> OutboxReading {
        var reading = OutboxReading()
        do {
            reading.statistics = try outbox.statistics()
        } catch {
            reading.error = "\(error)"
        }
        do {
            reading.journal = try outbox.journal(since: Self.localMidnight(ofMilliseconds: wall))
        } catch {
            reading.error = reading.error ?? "\(error)"
        }
        return reading
    }

    private func captureSection(
        _ capture: CaptureStatus.Snapshot, _ engine: EngineStatus.Snapshot, clock: ClockReading?
    ) -> StatusReport.Capture {
        let rates = engine.rates.perSecond
        return StatusReport.Capture(
            backend: capture.backend, state: capture.state.rawValue,
            adapters: capture.sources.map {
                StatusReport.Adapter(name: $0, state: capture.adapterStates[$0] ?? capture.state.rawValue)
            },
            advertsPerSecond: (rates.adverts * 10).rounded() / 10,
            iBeaconsPerSecond: (rates.beacons * 10).rounded() / 10,
            adverts: capture.adverts, iBeacons: capture.beaconAdverts, ringDrops: engine.ring.overwritten,
            ringDepth: engine.ring.depth,
            dropped: Dictionary(
                uniqueKeysWithValues: DropReason.allCases.compactMap { reason in
                    capture.decode.drops[reason] > 0 ? (reason.label, capture.decode.drops[reason]) : nil
                }),
            recoveries: capture.recoveries,
            stationBeacon: stationBeacon.map { beacon in
                StatusReport.StationBeacon(
                    beacon: "\(beacon)",
                    lastHeard: engine.station?.lastHeard.map {
                        CaptureTime(nanosecondsSinceEpoch: $0.nanosecondsSinceEpoch &+ (clock?.offset ?? 0)).iso8601
                    },
                    silentSeconds: Double((engine.station?.silence ?? .zero).components.seconds),
                    healthy: engine.station?.healthy ?? false)
            },
            lastError: capture.lastError)
    }

    private static func missingSetSection(_ sync: RegistrySyncStatus, wall: Int64) -> StatusReport.MissingSet {
        StatusReport.MissingSet(
            size: sync.missing, registry: sync.registry, source: sync.source.rawValue,
            ageSeconds: sync.fetchedAt.map { Double(wall - $0) / 1000 },
            lastRefresh: sync.lastSuccess.map(Self.iso),
            nextRefresh: sync.nextRefresh.map(Self.iso), lastError: sync.lastError, skipped: sync.skippedEntries,
            askingSeconds: sync.requestStartedAt.map { Double(wall - $0) / 1000 }, wholeLists: sync.wholeLists,
            changesApplied: sync.changesApplied, changesRefused: sync.changesRefused,
            changesRefusedAt: sync.changesRefusedAt.map(Self.iso))
    }

    /// The queue as a whole (with the registry's delivery, as before sinks) and each sink's line alike.
    private func outboxSection(
        _ queue: OutboxReading, _ engine: EngineStatus.Snapshot, posting: PosterStatistics,
        delivery: [(sink: SinkID, statistics: PosterStatistics)], wall: Int64
    ) -> StatusReport.OutboxState {
        let statistics = queue.statistics
        return StatusReport.OutboxState(
            depth: statistics.depth, oldestAgeSeconds: statistics.oldestCreatedAt.map { Double(wall - $0) / 1000 },
            deadLetters: statistics.deadLetters, evicted: statistics.evicted, delivered: posting.delivered,
            retries: posting.retries, uncommitted: engine.uncommitted,
            lastError: engine.commitError ?? queue.error ?? posting.lastError,
            sinks: statistics.sinks.map { share in
                let posted = delivery.first { $0.sink.name == share.sink }?.statistics
                return StatusReport.SinkState(
                    name: share.sink, depth: share.depth, deadLetters: share.deadLetters,
                    lastError: share.lastError ?? posted?.lastError, delivered: posted?.delivered,
                    retries: posted?.retries, held: posted?.held)
            })
    }

    /// Why the daemon is stuck (capture, engine, station beacon, outbox); empty when its loops run.
    public func problems() -> [String] {
        problems(capture: capture.current, engine: engine.current, monotonic: clock.monotonicNanoseconds())
    }

    /// A refresh this many times in a row without an answer makes the daemon unhealthy (about two minutes of
    /// backoff from the first failure): a registry gone for longer than a blip, though sightings wait safely.
    static let failedRefreshesForProblem = 3

    /// What the registry does that needs a person: it holds sightings back (a refused key, a redirect, a wrong
    /// URL), refuses the key for the bike list, or has not answered for several refreshes.
    static func registryProblems(sync: RegistrySyncStatus, posting: PosterStatistics, now: Int64) -> [String] {
        var problems: [String] = []
        if let held = posting.held { problems.append("sightings held: \(held)") }
        if let refused = sync.refusedList { problems.append(refused) }
        if let started = sync.requestStartedAt, now - started > 30_000 {
            problems.append("the registry has been asked for the bike list for \((now - started) / 1_000) s")
        }
        switch sync.lastErrorStatus {
        case 401?, 403?:
            problems.append("the registry refuses the API key for the bike list (HTTP \(sync.lastErrorStatus!))")
        case let status? where (300..<400).contains(status) || status == 404:
            problems.append("the registry's URL answers HTTP \(status) for the bike list: check `registry`")
        default:
            if sync.consecutiveFailures >= failedRefreshesForProblem, let error = sync.lastError {
                problems.append(
                    "the registry has not answered \(sync.consecutiveFailures) refreshes in a row: \(error)")
            }
        }
        return problems
    }

    static func warnings(sync: RegistrySyncStatus, deadLetters: Int) -> [String] {
        var warnings: [String] = []
        if deadLetters > 0 {
            warnings.append(
                "\(deadLetters) dead letter\(deadLetters == 1 ? "" : "s"): sightings the registry refused for good "
                    + "(`beacond retry-dead-letters` queues them again once the cause is fixed)")
        }
        return warnings
    }

    private func problems(capture: CaptureStatus.Snapshot, engine: EngineStatus.Snapshot, monotonic: Int64)
        -> [String]
    {
        var problems: [String] = []
        switch capture.state {
        case .failed: problems.append("capture failed: \(capture.lastError ?? "unknown error")")
        case .stopped: problems.append("capture stopped")
        case .starting, .running, .finished: break
        }
        if let heartbeat = engine.heartbeat {
            if monotonic - heartbeat > engineStall {
                problems.append("engine stalled for \((monotonic - heartbeat) / 1_000_000_000) s")
            }
        } else if monotonic - startedMonotonic > engineStall {
            problems.append("engine has not started")
        }
        if let station = engine.station, station.configured, !station.healthy {
            problems.append("station beacon silent for \(station.silence.components.seconds) s")
        }
        if let error = engine.commitError { problems.append("outbox cannot take sightings: \(error)") }
        return problems
    }

    static func iso(_ milliseconds: Int64) -> String {
        CaptureTime(nanosecondsSinceEpoch: milliseconds * 1_000_000).iso8601
    }

    /// The start of the local day (the Pi's time zone) containing the instant.
    static func localMidnight(ofMilliseconds milliseconds: Int64) -> Int64 {
        var seconds = time_t(milliseconds / 1000)
        var parts = tm()
        guard localtime_r(&seconds, &parts) != nil else { return milliseconds - milliseconds % 86_400_000 }
        parts.tm_hour = 0
        parts.tm_min = 0
        parts.tm_sec = 0
        parts.tm_isdst = -1
        return Int64(mktime(&parts)) * 1000
    }
}
