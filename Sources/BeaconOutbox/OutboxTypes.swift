public import BeaconEngine
import GRDB

/// A sighting whose wall-clock times are not known yet: heard while the system clock was not synchronised, it is
/// kept with its monotonic times and posted once they can be labelled (`SightingClock`).
public struct PendingTime: Hashable, Sendable {
    /// The visit's first and the event's last advert, on the monotonic clock (nanoseconds).
    public var firstSeen: Int64
    public var lastSeen: Int64
    /// When it was queued, on the monotonic clock.
    public var queuedAt: Int64
    /// The boot those monotonic times belong to.
    public var bootID: String
    /// Wall minus monotonic when it was queued: the best guess then, from a clock not yet synchronised.
    public var offset: Int64

    public init(firstSeen: Int64, lastSeen: Int64, queuedAt: Int64, bootID: String, offset: Int64) {
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
        self.queuedAt = queuedAt
        self.bootID = bootID
        self.offset = offset
    }
}

/// A sighting ready for the queue: its id, its kind (which decides eviction), the request body to send, and
/// the few fields `status` shows in its list of recent sightings.
public struct OutboxItem: Hashable, Sendable {
    public var sightingID: String
    public var kind: SightingKind
    public var body: String
    public var bikeID: String
    /// When the beacon was last heard, milliseconds since the epoch.
    public var seenAt: Int64
    public var rssi: Double?
    public var proximity: String
    /// Set when the body's times are provisional (see `PendingTime`).
    public var pendingTime: PendingTime?

    public init(
        sightingID: String, kind: SightingKind, body: String, bikeID: String = "", seenAt: Int64 = 0,
        rssi: Double? = nil,
        proximity: String = "unknown", pendingTime: PendingTime? = nil
    ) {
        self.pendingTime = pendingTime
        self.sightingID = sightingID
        self.kind = kind
        self.body = body
        self.bikeID = bikeID
        self.seenAt = seenAt
        self.rssi = rssi
        self.proximity = proximity
    }
}

/// One line of the sighting journal `status` shows: what was seen and how far its delivery has got.
public struct JournalEntry: Hashable, Sendable {
    public enum Delivery: String, Hashable, Sendable {
        case queued, delivered, dead, evicted
    }
    public var sightingID: String
    public var kind: SightingKind
    public var bikeID: String
    public var seenAt: Int64
    public var rssi: Double?
    public var proximity: String
    public var delivery: Delivery
}

/// A queued sighting.
public struct OutboxEntry: Hashable, Sendable {
    public var sequence: Int64
    public var sightingID: String
    public var kind: SightingKind
    public var body: String
    /// When it was queued (the caller's clock, milliseconds since the epoch).
    public var createdAt: Int64
    /// Failed attempts to deliver it to the sink it was read for.
    public var attempts: Int
    /// Set while the body's times are provisional: the poster settles them before sending.
    public var pendingTime: PendingTime?

    init(row: Row) {
        sequence = row["seq"]
        sightingID = row["sightingId"]
        kind = SightingKind(rawValue: row["kind"]) ?? .update
        body = row["body"]
        createdAt = row["createdAt"]
        attempts = row["attempts"]
        if let first: Int64 = row["pendingFirstSeen"], let last: Int64 = row["pendingLastSeen"],
            let queued: Int64 = row["pendingQueuedAt"],
            let boot: String = row["pendingBootId"], let offset: Int64 = row["pendingOffset"]
        {
            pendingTime = PendingTime(firstSeen: first, lastSeen: last, queuedAt: queued, bootID: boot, offset: offset)
        }
    }
}

public struct EnqueueResult: Hashable, Sendable {
    public var inserted = 0
    /// Already queued, delivered or dead-lettered.
    public var duplicates = 0
    /// Older rows dropped to stay within capacity.
    public var evicted = 0
}

public struct OutboxStatistics: Hashable, Sendable {
    /// Sightings some sink is still owed.
    public var depth: Int
    public var deadLetters: Int
    /// Rows evicted over the outbox's life to stay within capacity.
    public var evicted: Int
    public var oldestCreatedAt: Int64?
    /// Each configured sink's share, in the configuration's order.
    public var sinks: [SinkBacklog] = []

    public init(depth: Int = 0, deadLetters: Int = 0, evicted: Int = 0, oldestCreatedAt: Int64? = nil) {
        self.depth = depth
        self.deadLetters = deadLetters
        self.evicted = evicted
        self.oldestCreatedAt = oldestCreatedAt
    }
}

/// What one sink is still owed: how many sightings, its dead letters, and the attempts and last error of the
/// sighting at the head of its line (the one holding the rest up).
public struct SinkBacklog: Hashable, Sendable {
    public var sink: String
    public var depth: Int
    public var deadLetters: Int
    public var attempts: Int
    public var lastError: String?

    public init(sink: String, depth: Int, deadLetters: Int, attempts: Int = 0, lastError: String? = nil) {
        self.sink = sink
        self.depth = depth
        self.deadLetters = deadLetters
        self.attempts = attempts
        self.lastError = lastError
    }
}

public struct DeadLetter: Hashable, Sendable {
    /// The sink that refused it.
    public var sink: String
    public var sightingID: String
    public var kind: SightingKind
    public var failedAt: Int64
    public var status: Int?
    public var reason: String
}

/// An outbox operation that failed, with the path and the underlying SQLite error kept for the log line.
public struct OutboxError: Error, CustomStringConvertible {
    public enum Code: Sendable {
        case open, read, write
        /// The file is not an SQLite database, or one SQLite finds malformed: truncated, overwritten.
        case damaged
    }
    public var code: Code
    public var path: String
    public var cause: any Error

    init(_ code: Code, path: String, cause: any Error) {
        self.code = code
        self.path = path
        self.cause = cause
    }

    public var description: String {
        let action =
            switch code {
            case .open: "cannot open the outbox"
            case .read: "cannot read the outbox"
            case .write: "cannot write the outbox"
            case .damaged: "the outbox is damaged"
            }
        let detail = (cause as? DatabaseError).map { $0.message ?? "\($0.resultCode)" } ?? String(describing: cause)
        return "\(path): \(action): \(detail)"
    }
}
