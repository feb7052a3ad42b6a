public import BeaconCapture
public import BeaconEngine
public import BeaconWire
import Foundation
import Synchronization

/// The `hci` backend as a capture source: raw HCI sockets on the configured adapters, passive scanning,
/// every advert decoded from one reused buffer into the ring. When an adapter fails (unplugged, powered off)
/// the source reports `failed`, and the daemon exits for systemd to restart it.
public final class LiveCapture: CaptureSource {
    public let monitor: CaptureMonitor
    private let capture: UncheckedCapture
    private let stopRequested = Atomic<Bool>(false)
    private let running = Atomic<Bool>(false)

    /// Opens the adapters and starts scanning now, so a missing adapter or capability stops the daemon before
    /// it starts (opening a raw HCI socket needs no privilege; sending a command needs CAP_NET_RAW). Until
    /// `start`, reports wait in the sockets' buffers.
    public init(adapters: [String], intervalMilliseconds: Double, windowMilliseconds: Double) throws(HCIError) {
        let capture = try HCICapture(adapters: adapters)
        try capture.start(intervalMilliseconds: intervalMilliseconds, windowMilliseconds: windowMilliseconds)
        self.capture = UncheckedCapture(capture)
        monitor = CaptureMonitor(backend: "hci", sources: adapters)
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
}

/// The capture is only touched by its one thread once started.
private struct UncheckedCapture: @unchecked Sendable {
    let capture: HCICapture
    init(_ capture: HCICapture) { self.capture = capture }
}
