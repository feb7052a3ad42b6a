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

        public init(
            backend: String, state: String, adapters: [Adapter], advertsPerSecond: Double, iBeaconsPerSecond: Double,
            adverts: UInt64, iBeacons: UInt64, ringDrops: UInt64, ringDepth: UInt64, dropped: [String: UInt64],
            recoveries: Int, stationBeacon: StationBeacon? = nil, lastError: String? = nil
        ) {
            self.backend = backend
            self.state = state
            self.adapters = adapters
            self.advertsPerSecond = advertsPerSecond
            self.iBeaconsPerSecond = iBeaconsPerSecond
            self.adverts = adverts
            self.iBeacons = iBeacons
            self.ringDrops = ringDrops
            self.ringDepth = ringDepth
            self.dropped = dropped
            self.recoveries = recoveries
            self.stationBeacon = stationBeacon
            self.lastError = lastError
        }
    }

    public struct Adapter: Codable, Sendable, Equatable {
        /// An adapter name, or a replayed file.
        public var name: String
        public var state: String

        public init(
            name: String, state: String
        ) {
            self.name = name
            self.state = state
        }
    }

    public struct StationBeacon: Codable, Sendable, Equatable {
        public var beacon: String
        public var lastHeard: String?
        public var silentSeconds: Double
        public var healthy: Bool

        public init(
            beacon: String, lastHeard: String? = nil, silentSeconds: Double, healthy: Bool
        ) {
            self.beacon = beacon
            self.lastHeard = lastHeard
            self.silentSeconds = silentSeconds
            self.healthy = healthy
        }
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
        /// Lists taken whole since start, and lists followed by their changes (absent from an older daemon).
        public var wholeLists: Int?
        public var changesApplied: Int?
        /// The last changes that did not add up to the registry's list, and when: the whole list was fetched then.
        public var changesRefused: String?
        public var changesRefusedAt: String?

        public init(
            size: Int, registry: String, source: String, ageSeconds: Double? = nil, lastRefresh: String? = nil,
            nextRefresh: String? = nil, lastError: String? = nil, skipped: Int, askingSeconds: Double? = nil,
            wholeLists: Int? = nil, changesApplied: Int? = nil, changesRefused: String? = nil,
            changesRefusedAt: String? = nil
        ) {
            self.wholeLists = wholeLists
            self.changesApplied = changesApplied
            self.changesRefused = changesRefused
            self.changesRefusedAt = changesRefusedAt
            self.size = size
            self.registry = registry
            self.source = source
            self.ageSeconds = ageSeconds
            self.lastRefresh = lastRefresh
            self.nextRefresh = nextRefresh
            self.lastError = lastError
            self.skipped = skipped
            self.askingSeconds = askingSeconds
        }
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

        public init(
            depth: Int, oldestAgeSeconds: Double? = nil, deadLetters: Int, evicted: Int, delivered: Int, retries: Int,
            uncommitted: Int, lastError: String? = nil, sinks: [SinkState]? = nil
        ) {
            self.depth = depth
            self.oldestAgeSeconds = oldestAgeSeconds
            self.deadLetters = deadLetters
            self.evicted = evicted
            self.delivered = delivered
            self.retries = retries
            self.uncommitted = uncommitted
            self.lastError = lastError
            self.sinks = sinks
        }
    }

    /// What one sink (the registry, an MQTT broker) is still owed.
    public struct SinkState: Codable, Sendable, Equatable {
        public var name: String
        public var depth: Int
        public var deadLetters: Int
        /// Why the sighting at the head of its line has not gone yet.
        public var lastError: String?
        /// Delivered to it, and attempts that failed and are tried again, since the start (absent from a daemon
        /// older than one poster per sink).
        public var delivered: Int?
        public var retries: Int?
        /// Why it takes no sighting at all, while it does (a refused key, a broker away).
        public var held: String?

        public init(
            name: String, depth: Int, deadLetters: Int, lastError: String? = nil, delivered: Int? = nil,
            retries: Int? = nil, held: String? = nil
        ) {
            self.name = name
            self.depth = depth
            self.deadLetters = deadLetters
            self.lastError = lastError
            self.delivered = delivered
            self.retries = retries
            self.held = held
        }
    }

    public struct Sightings: Codable, Sendable, Equatable {
        /// Since local midnight.
        public var today: Int
        public var openVisits: Int
        /// The last ten, newest first.
        public var recent: [Recent]

        public init(
            today: Int, openVisits: Int, recent: [Recent]
        ) {
            self.today = today
            self.openVisits = openVisits
            self.recent = recent
        }
    }

    public struct Recent: Codable, Sendable, Equatable {
        public var time: String
        public var kind: String
        public var bikeId: String
        public var rssi: Double?
        public var proximity: String
        /// queued, delivered, dead or evicted.
        public var delivery: String

        public init(
            time: String, kind: String, bikeId: String, rssi: Double? = nil, proximity: String, delivery: String
        ) {
            self.time = time
            self.kind = kind
            self.bikeId = bikeId
            self.rssi = rssi
            self.proximity = proximity
            self.delivery = delivery
        }
    }

    public init(
        version: String, pid: Int32, startedAt: String, uptimeSeconds: Double, healthy: Bool, problems: [String],
        stuck: Bool, warnings: [String], clockSynchronized: Bool? = nil, capture: Capture, missingSet: MissingSet,
        outbox: OutboxState, sightings: Sightings
    ) {
        self.version = version
        self.pid = pid
        self.startedAt = startedAt
        self.uptimeSeconds = uptimeSeconds
        self.healthy = healthy
        self.problems = problems
        self.stuck = stuck
        self.warnings = warnings
        self.clockSynchronized = clockSynchronized
        self.capture = capture
        self.missingSet = missingSet
        self.outbox = outbox
        self.sightings = sightings
    }
}
