/// What `beacond status --json` prints and the control socket's `status` answers: the daemon's whole state in
/// one document. Times are ISO 8601 UTC; ages and durations are seconds. Nothing here names a MAC address or
/// owner data.
public struct StatusReport: Codable, Sendable, Equatable {
    public var version: String
    public var pid: Int32
    public var startedAt: String
    public var uptimeSeconds: Double
    /// False when anything needs a person: capture, the engine or the station beacon not well, or the registry
    /// refusing the station, not answering, or holding sightings back; `problems` says which.
    public var healthy: Bool
    public var problems: [String]
    /// True when the daemon's own loops cannot go on (capture failed, the engine stalled, the station beacon
    /// silent, the outbox refusing sightings): what a restart may mend, so the watchdog is fed only without it. A
    /// registry that refuses or does not answer makes the daemon unhealthy, not stuck: restarting would not help.
    public var stuck: Bool
    /// Worth a look, but nothing is lost and nothing stops (dead letters, an unsynchronised clock).
    public var warnings: [String]
    /// Whether the system clock is synchronised (nil: it cannot be told). Before it is, live sightings wait.
    public var clockSynchronized: Bool?
    public var capture: Capture
    public var missingSet: MissingSet
    public var outbox: OutboxState
    public var sightings: Sightings

    public struct Capture: Codable, Sendable, Equatable {
        public var backend: String
        public var state: String
        public var adapters: [Adapter]
        public var advertsPerSecond: Double
        public var iBeaconsPerSecond: Double
        public var adverts: UInt64
        public var iBeacons: UInt64
        /// Adverts the ring overwrote before the engine read them.
        public var ringDrops: UInt64
        public var ringDepth: UInt64
        /// Input dropped while decoding, by reason (only reasons that occurred).
        public var dropped: [String: UInt64]
        public var recoveries: Int
        public var stationBeacon: StationBeacon?
        public var lastError: String?
    }

    public struct Adapter: Codable, Sendable, Equatable {
        /// An adapter name, or a replayed file.
        public var name: String
        public var state: String
    }

    public struct StationBeacon: Codable, Sendable, Equatable {
        public var beacon: String
        public var lastHeard: String?
        public var silentSeconds: Double
        public var healthy: Bool
    }

    public struct MissingSet: Codable, Sendable, Equatable {
        public var size: Int
        public var registry: String
        /// none, cache or registry.
        public var source: String
        public var ageSeconds: Double?
        public var lastRefresh: String?
        public var nextRefresh: String?
        public var lastError: String?
        /// Entries of the last list from the registry that could not be used (malformed), skipped.
        public var skipped: Int
        /// How long the refresh under way has been waiting for the registry; nil between refreshes.
        public var askingSeconds: Double?
    }

    public struct OutboxState: Codable, Sendable, Equatable {
        public var depth: Int
        public var oldestAgeSeconds: Double?
        public var deadLetters: Int
        public var evicted: Int
        public var delivered: Int
        public var retries: Int
        /// Sightings held in memory because the outbox cannot take them (disk full).
        public var uncommitted: Int
        public var lastError: String?
        /// Each sink's share of the queue (absent from a daemon older than sinks).
        public var sinks: [SinkState]?
    }

    /// What one sink (the registry, an MQTT broker) is still owed.
    public struct SinkState: Codable, Sendable, Equatable {
        public var name: String
        public var depth: Int
        public var deadLetters: Int
        /// Why the sighting at the head of its line has not gone yet.
        public var lastError: String?
    }

    public struct Sightings: Codable, Sendable, Equatable {
        /// Since local midnight.
        public var today: Int
        public var openVisits: Int
        /// The last ten, newest first.
        public var recent: [Recent]
    }

    public struct Recent: Codable, Sendable, Equatable {
        public var time: String
        public var kind: String
        public var bikeId: String
        public var rssi: Double?
        public var proximity: String
        /// queued, delivered, dead or evicted.
        public var delivery: String
    }
}
