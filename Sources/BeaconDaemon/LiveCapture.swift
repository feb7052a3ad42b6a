public import BeaconCapture
public import BeaconEngine
import BeaconPOSIX
public import BeaconWire
public import Logging
public import StationSettings

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Live capture as a capture source, for each backend: `hci` (raw HCI sockets, beacond scans), `monitor`
/// (bluetoothd scans; every report read from the HCI monitor channel) and `dbus` (bluetoothd scans; adverts
/// rebuilt from D-Bus properties). Every advert is decoded from one reused buffer into the ring. Each adapter
/// has a stall watchdog that climbs the recovery ladder, and an adapter that goes away is taken up again
/// when it comes back; both are logged and counted in the status.
public final class LiveCapture: CaptureSource {
    public let status: CaptureStatus
    private let radio: UncheckedRadio
    private let station: BeaconIdentity?
    private let thread = LoopThread()
    private let clock: StationClock

    /// Opens the adapters and starts scanning now, so a missing adapter, bluetoothd or capability stops the
    /// daemon before it starts (opening a raw HCI socket needs no privilege; sending a command needs
    /// CAP_NET_RAW). Until `start`, reports wait in the sockets' buffers. With a station beacon, only it
    /// counts as liveness.
    public init(configuration: DaemonConfiguration, logger: Logger, clock: StationClock = .system) throws(HCIError) {
        var settings = CaptureSettings(
            intervalMilliseconds: configuration.scanIntervalMilliseconds,
            windowMilliseconds: configuration.scanWindowMilliseconds,
            recovery: .seconds(stallAfter: Double(configuration.stallTimeout)))
        settings.livenessFromAnyAdvert = configuration.stationBeacon == nil
        settings.gatherMilliseconds = configuration.captureGatherMilliseconds
        settings.clock = clock.capture
        let backend = configuration.backend
        let status = CaptureStatus(backend: backend.rawValue, sources: configuration.adapters)
        let onReport = { (report: AdapterReport) in LiveCapture.record(report, in: status, logger: logger) }
        let (radio, methods) = try backend.open(
            adapters: configuration.adapters, regions: configuration.regions, settings: settings, onReport: onReport)
        status.update { snapshot in
            for (adapter, method) in zip(configuration.adapters, methods) {
                snapshot.adapterStates[adapter] = "scanning (\(method))"
            }
        }
        logger.info(
            "scanning",
            metadata: ["capture.backend": "\(backend)", "capture.method": "\(methods.joined(separator: ","))"])
        self.radio = UncheckedRadio(radio)
        self.status = status
        station = configuration.stationBeacon
        self.clock = clock
    }

    public func start(into ring: AdvertRing) { thread.start(name: "beacond-capture") { [self] in listen(into: ring) } }

    public func stop() { thread.stop() }

    public func waitUntilStopped() async { await thread.waitUntilStopped() }

    /// Live adverts are stamped with the monotonic clock (one read per batch, `HCICapture`), so visits, report
    /// intervals and the station beacon's silence are measured on a clock that NTP stepping the wall clock cannot
    /// move; the wall clock only labels what leaves the Pi (`SightingClock`).
    public var timeBase: CaptureTimeBase { .monotonic }

    public func now() -> CaptureTime { CaptureTime(nanosecondsSinceEpoch: clock.monotonicNanoseconds()) }

    private func listen(into ring: AdvertRing) {
        let capture = self.radio.radio
        let station = self.station
        var producer = ring.makeProducer()
        var decoder = AdvertDecoder()
        var adverts: UInt64 = 0
        var beacons: UInt64 = 0
        let clock = self.clock
        var lastPublished = clock.monotonicNanoseconds()
        func publish(_ state: CaptureStatus.State? = nil, error: String? = nil) {
            let decode = decoder.counters
            status.update {
                if let state { $0.state = state }
                if let error { $0.lastError = error }
                $0.decode = decode
                $0.adverts = adverts
                $0.beaconAdverts = beacons
            }
        }
        do {
            publish(.running)
            while !thread.stopRequested {
                try capture.poll(timeoutMilliseconds: 200) { record in
                    decoder.decode(record) { advert in
                        adverts += 1
                        if let beacon = BeaconAdvert(advert) {
                            producer.push(beacon)
                            beacons += 1
                            if let station,
                                BeaconIdentity(
                                    uuid: beacon.beacon.uuid, major: beacon.beacon.major, minor: beacon.beacon.minor)
                                    == station
                            {
                                capture.heard(adapter: advert.adapter)
                            }
                        }
                    }
                }
                // Status four times a second is plenty, and keeps the lock off the per-advert path.
                let now = clock.monotonicNanoseconds()
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
    static func record(_ report: AdapterReport, in status: CaptureStatus, logger: Logger) {
        let adapter: Logger.Metadata = ["adapter": "\(report.adapter)"]
        switch report.event {
        case .ladder(.stalled(let silence)):
            logger.warning("scan stalled: no advert for \(silence / 1_000_000_000) s; recovering", metadata: adapter)
        case .ladder(.take(let step)):
            logger.notice("recovery: \(step)", metadata: adapter)
            status.update {
                $0.recoveries += 1
                $0.adapterStates[report.adapter] = "recovering: \(step)"
            }
        case .ladder(.recovered(let step)):
            logger.notice("adverts are back\(step.map { " after: \($0)" } ?? "")", metadata: adapter)
            status.update { $0.adapterStates[report.adapter] = "scanning" }
        case .ladder(.gaveUp(let rest)):
            logger.error("recovery failed; next attempt in \(rest / 1_000_000_000) s", metadata: adapter)
            status.update { $0.adapterStates[report.adapter] = "stalled; retrying in \(rest / 1_000_000_000) s" }
        case .stepFailed(let step, let error):
            logger.warning("recovery step failed: \(step): \(error)", metadata: adapter)
            status.update { $0.lastError = "\(report.adapter): \(step): \(error)" }
        case .gone(let error):
            logger.error(
                "adapter went away; waiting for it to come back",
                metadata: adapter.merging(["error": "\(error)"]) { $1 })
            status.update { $0.adapterStates[report.adapter] = "away (\(error))" }
        case .back(let mode):
            logger.notice("adapter is back; scanning (\(mode))", metadata: adapter)
            status.update { $0.adapterStates[report.adapter] = "scanning (\(mode))" }
        }
    }
}

/// The radio is only touched by its one thread once started.
private struct UncheckedRadio: @unchecked Sendable {
    let radio: any LiveRadio
    init(_ radio: any LiveRadio) { self.radio = radio }
}
