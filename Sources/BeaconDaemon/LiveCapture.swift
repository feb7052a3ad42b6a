public import BeaconCapture
public import BeaconEngine
public import BeaconWire
import Foundation
public import Logging
import Synchronization

/// The `hci` backend as a capture source: raw HCI sockets on the configured adapters, passive scanning,
/// every advert decoded from one reused buffer into the ring. Each adapter has a stall watchdog that climbs
/// the recovery ladder, and an adapter that goes away is reopened when it comes back; both are logged and
/// counted in the status.
public final class LiveCapture: CaptureSource {
    public let monitor: CaptureMonitor
    private let capture: UncheckedCapture
    private let station: BeaconIdentity?
    private let logger: Logger
    private let stopRequested = Atomic<Bool>(false)
    private let running = Atomic<Bool>(false)

    /// Opens the adapters and starts scanning now, so a missing adapter or capability stops the daemon before
    /// it starts (opening a raw HCI socket needs no privilege; sending a command needs CAP_NET_RAW). Until
    /// `start`, reports wait in the sockets' buffers. With a station beacon, only it counts as liveness.
    public init(configuration: DaemonConfiguration, logger: Logger) throws(HCIError) {
        var settings = HCICapture.Settings(
            intervalMilliseconds: configuration.scanIntervalMilliseconds, windowMilliseconds: configuration.scanWindowMilliseconds,
            recovery: .seconds(stallAfter: Double(configuration.stallTimeout)))
        settings.livenessFromAnyAdvert = configuration.stationBeacon == nil
        let monitor = CaptureMonitor(backend: "hci", sources: configuration.adapters)
        let capture = try HCICapture(adapters: configuration.adapters, settings: settings) { report in
            LiveCapture.record(report, in: monitor, logger: logger)
        }
        let modes = try capture.start()
        monitor.update { snapshot in
            for (adapter, mode) in zip(configuration.adapters, modes) { snapshot.adapterStates[adapter] = "scanning (\(mode.rawValue))" }
        }
        self.capture = UncheckedCapture(capture)
        self.monitor = monitor
        self.logger = logger
        station = configuration.stationBeacon
    }

    public func start(into ring: AdvertRing) {
        running.store(true, ordering: .releasing)
        let thread = Thread { [self] in
            listen(into: ring)
            running.store(false, ordering: .releasing)
        }
        thread.name = "beacond-hci"
        thread.start()
    }

    public func stop() { stopRequested.store(true, ordering: .relaxed) }

    public func waitUntilStopped() async {
        while running.load(ordering: .acquiring) { try? await Task.sleep(for: .milliseconds(10)) }
    }

    public func now() -> CaptureTime { CaptureTime(nanosecondsSinceEpoch: SystemTime.wallMilliseconds() * 1_000_000) }

    private func listen(into ring: AdvertRing) {
        let capture = self.capture.capture
        let station = self.station
        var producer = ring.makeProducer()
        var decoder = AdvertDecoder()
        var adverts: UInt64 = 0
        var beacons: UInt64 = 0
        var lastAdvertAt: Int64?
        var lastPublished = SystemTime.monotonicNanoseconds()
        func publish(_ state: CaptureMonitor.State? = nil, error: String? = nil) {
            let decode = decoder.counters
            monitor.update {
                if let state { $0.state = state }
                if let error { $0.lastError = error }
                $0.decode = decode
                $0.adverts = adverts
                $0.beaconAdverts = beacons
                $0.lastAdvertAt = lastAdvertAt
            }
        }
        do {
            publish(.running)
            while !stopRequested.load(ordering: .relaxed) {
                try capture.poll(timeoutMilliseconds: 200) { record in
                    decoder.decode(record) { advert in
                        adverts += 1
                        lastAdvertAt = SystemTime.wallMilliseconds()
                        if let beacon = BeaconAdvert(advert) {
                            producer.push(beacon)
                            beacons += 1
                            if let station, BeaconIdentity(uuid: beacon.beacon.uuid, major: beacon.beacon.major, minor: beacon.beacon.minor) == station { capture.heard(adapter: advert.adapter) }
                        }
                    }
                }
                // Status four times a second is plenty, and keeps the lock off the per-advert path.
                let now = SystemTime.monotonicNanoseconds()
                if now - lastPublished > 250_000_000 {
                    lastPublished = now
                    publish()
                }
            }
            capture.stop()
            publish(.stopped)
        } catch {
            capture.stop()
            publish(.failed, error: "\(error)")
        }
    }

    /// Logs what happened to an adapter and keeps its state and the recovery count for `status`.
    static func record(_ report: HCICapture.Report, in monitor: CaptureMonitor, logger: Logger) {
        let adapter: Logger.Metadata = ["adapter": "\(report.adapter)"]
        switch report.event {
        case .ladder(.stalled(let silence)):
            logger.warning("scan stalled: no advert for \(silence / 1_000_000_000) s; recovering", metadata: adapter)
        case .ladder(.take(let step)):
            logger.notice("recovery: \(step)", metadata: adapter)
            monitor.update {
                $0.recoveries += 1
                $0.adapterStates[report.adapter] = "recovering: \(step)"
            }
        case .ladder(.recovered(let step)):
            logger.notice("adverts are back\(step.map { " after: \($0)" } ?? "")", metadata: adapter)
            monitor.update { $0.adapterStates[report.adapter] = "scanning" }
        case .ladder(.gaveUp(let rest)):
            logger.error("recovery failed; next attempt in \(rest / 1_000_000_000) s", metadata: adapter)
            monitor.update { $0.adapterStates[report.adapter] = "stalled; retrying in \(rest / 1_000_000_000) s" }
        case .stepFailed(let step, let error):
            logger.warning("recovery step failed: \(step): \(error)", metadata: adapter)
            monitor.update { $0.lastError = "\(report.adapter): \(step): \(error)" }
        case .gone(let error):
            logger.error("adapter went away; waiting for it to come back", metadata: adapter.merging(["error": "\(error)"]) { $1 })
            monitor.update { $0.adapterStates[report.adapter] = "away (\(error))" }
        case .back(let mode):
            logger.notice("adapter is back; scanning (\(mode.rawValue))", metadata: adapter)
            monitor.update { $0.adapterStates[report.adapter] = "scanning (\(mode.rawValue))" }
        }
    }
}

/// The capture is only touched by its one thread once started.
private struct UncheckedCapture: @unchecked Sendable {
    let capture: HCICapture
    init(_ capture: HCICapture) { self.capture = capture }
}
