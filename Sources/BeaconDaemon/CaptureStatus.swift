public import BeaconWire
import LockedValue

/// What the capture side reports about itself, for `status`, the watchdog and the engine's end-of-input
/// check. The capture thread publishes a snapshot now and then (not per advert); anyone may read it.
public final class CaptureStatus: Sendable {
    public enum State: String, Sendable, Codable {
        /// Opening the source.
        case starting
        case running
        /// A replay reached the end of its files.
        case finished
        /// Stopped on request (shutdown).
        case stopped
        /// Gave up: the error says why.
        case failed
    }

    public struct Snapshot: Sendable {
        public var state: State = .starting
        public var backend: String
        /// The adapters, or the replayed files.
        public var sources: [String]
        /// Decode counters, complete at the end of each replayed file (a radio's as they come).
        public var decode = DecodeCounters()
        /// Advertising reports decoded, of any kind.
        public var adverts: UInt64 = 0
        /// iBeacon adverts handed to the ring.
        public var beaconAdverts: UInt64 = 0
        /// When the last advert of any kind arrived, wall-clock milliseconds.
        /// Recovery-ladder steps taken (live capture).
        public var recoveries = 0
        /// Each live adapter's state in words ("scanning (legacy)", "away (…)", "recovering: …").
        public var adapterStates: [String: String] = [:]
        public var lastError: String?
    }

    private let snapshot: LockedValue<Snapshot>

    public init(backend: String, sources: [String]) {
        snapshot = LockedValue(Snapshot(backend: backend, sources: sources))
    }

    public var current: Snapshot { snapshot.withLock { $0 } }

    public func update(_ body: (inout Snapshot) -> Void) { snapshot.withLock { body(&$0) } }

    /// True once the source will push nothing more.
    public var ended: Bool {
        switch current.state {
        case .finished, .stopped, .failed: true
        case .starting, .running: false
        }
    }
}
