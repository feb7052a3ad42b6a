import BeaconEngine
import GRDB

/// The durable queue between the engine and the places sightings go (the sinks: the registry, an MQTT broker):
/// SQLite (a rollback journal, synchronous=FULL) in the state directory. A sighting is committed here once, before
/// any network attempt, owed to every configured sink, and each sink has its own delivery state: a sighting the
/// registry has but the broker not yet is retried for the broker alone. It leaves once every sink has answered for
/// it: taken (to `delivered`, remembered so a replay cannot queue it again) or refused for good (to the dead-letter
/// table that `status` shows, by sink).
///
/// Bounded: past `capacity` rows the oldest `update` rows are evicted first, then the oldest `exit` rows;
/// `enter` rows never are (the queue grows past its bound rather than lose an owner's first alert).
public final class Outbox: Sendable {
    public let path: String
    public let capacity: Int
    /// The sinks a new sighting is owed to, in the configuration's order.
    public let sinks: [String]
    /// Sightings owed only to sinks no longer configured, retired when the outbox was opened.
    public let abandoned: Int
    private let pool: DatabaseQueue
    /// The registry's sink name, the one every outbox before sinks had.
    public static let registry = "registry"
    /// How many delivered ids are remembered for de-duplication.
    static let deliveredMemory = 200_000

    public init(path: String, capacity: Int = 100_000, sinks: [String] = [Outbox.registry]) throws(OutboxError) {
        self.path = path
        self.capacity = max(1, capacity)
        self.sinks = sinks.isEmpty ? [Self.registry] : sinks
        do {
            var configuration = Configuration()
            configuration.prepareDatabase { db in
                // A rollback journal, not WAL: a commit is written to the outbox's own file before it returns, so a
                // committed sighting needs no other file. In WAL mode it lived in the -wal until a checkpoint, and a
                // -wal lost or damaged after a crash (SQLite ignores one whose checksums fail) lost it without a
                // word. The journal exists only during a commit. Opening an outbox an older beacond left in WAL
                // mode recovers its -wal first, then leaves WAL. synchronous=FULL syncs the journal and the file at
                // each commit: a committed sighting survives a power cut, not only a crash. Sightings are rare,
                // so the extra syncs do not matter (docs/performance-history.md, "Outbox").
                try db.execute(sql: "PRAGMA journal_mode = DELETE")
                try db.execute(sql: "PRAGMA synchronous = FULL")
                // 512 KiB of page cache per connection instead of SQLite's 2 MiB: the queue is small and touched a
                // few times a minute, and on a Pi the memory is worth more than the odd page read.
                try db.execute(sql: "PRAGMA cache_size = -512")
            }
            configuration.busyMode = .timeout(5)
            // One connection for every read and write: the poster's and status's reads take microseconds.
            pool = try DatabaseQueue(path: path, configuration: configuration)
            // A truncated file opens without complaint and fails at some later write; check every page now,
            // while the daemon can still move it aside and start clean.
            let check = try pool.read { db in try String.fetchAll(db, sql: "PRAGMA quick_check") }
            guard check == ["ok"] else {
                throw DatabaseError(resultCode: .SQLITE_CORRUPT, message: check.prefix(3).joined(separator: "; "))
            }
            try Self.migrator.migrate(pool)
            let sinks = self.sinks
            abandoned = try pool.write { db in try Self.forget(sinksOtherThan: sinks, db) }
        } catch let error as DatabaseError where Self.damageCodes.contains(error.resultCode.primaryResultCode) {
            throw OutboxError(.damaged, path: path, cause: error)
        } catch {
            throw OutboxError(.open, path: path, cause: error)
        }
    }

    /// What SQLite says about a file that is not a database, or a malformed one.
    private static let damageCodes: [ResultCode] = [.SQLITE_CORRUPT, .SQLITE_NOTADB]

    /// Retires what only sinks no longer configured are owed (the operator took MQTT out, say): those sightings
    /// have been everywhere they still go. Returns how many sightings left the queue.
    private static func forget(sinksOtherThan sinks: [String], _ db: Database) throws -> Int {
        let marks = sinks.map { _ in "?" }.joined(separator: ", ")
        try db.execute(sql: "DELETE FROM owed WHERE sink NOT IN (\(marks))", arguments: StatementArguments(sinks))
        try db.execute(
            sql: """
                INSERT OR IGNORE INTO delivered (sightingId, deliveredAt)
                    SELECT sightingId, CAST(strftime('%s', 'now') AS INTEGER) * 1000 FROM outbox
                    WHERE seq NOT IN (SELECT seq FROM owed)
                """)
        try db.execute(sql: "DELETE FROM outbox WHERE seq NOT IN (SELECT seq FROM owed)")
        return db.changesCount
    }

    /// How many journal lines are kept: enough for a busy day, small enough to count in a moment.
    static let journalMemory = 10_000

    /// Commits sightings (one transaction). Ones already queued, delivered or dead-lettered are skipped, so
    /// the same sighting produced twice (a restart replaying a capture) is never queued twice.
    @discardableResult
    public func enqueue(_ items: [OutboxItem], now: Int64) throws(OutboxError) -> EnqueueResult {
        try write { db in
            var result = EnqueueResult()
            for item in items {
                let known =
                    try Bool.fetchOne(
                        db,
                        sql: """
                            SELECT EXISTS(SELECT 1 FROM delivered WHERE sightingId = ?1)
                                OR EXISTS(SELECT 1 FROM deadLetter WHERE sightingId = ?1)
                            """, arguments: [item.sightingID]) ?? false
                guard !known else {
                    result.duplicates += 1
                    continue
                }
                let pending = item.pendingTime
                try db.execute(
                    sql: """
                        INSERT OR IGNORE INTO outbox (sightingId, kind, body, createdAt, pendingFirstSeen, pendingLastSeen,
                            pendingQueuedAt, pendingBootId, pendingOffset) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [
                        item.sightingID, item.kind.rawValue, item.body, now, pending?.firstSeen, pending?.lastSeen,
                        pending?.queuedAt,
                        pending?.bootID, pending?.offset,
                    ])
                guard db.changesCount == 1 else {
                    result.duplicates += 1
                    continue
                }
                let sequence = db.lastInsertedRowID
                for sink in sinks {
                    try db.execute(sql: "INSERT INTO owed (sink, seq) VALUES (?, ?)", arguments: [sink, sequence])
                }
                result.inserted += 1
                try db.execute(
                    sql: "INSERT OR IGNORE INTO journal VALUES (?, ?, ?, ?, ?, ?)",
                    arguments: [
                        item.sightingID, item.kind.rawValue, item.bikeID, item.seenAt, item.rssi, item.proximity,
                    ])
            }
            if result.inserted > 0 {
                try db.execute(
                    sql:
                        "DELETE FROM journal WHERE sightingId IN (SELECT sightingId FROM journal ORDER BY seenAt DESC LIMIT -1 OFFSET ?)",
                    arguments: [Self.journalMemory])
            }
            result.evicted = try evictOverCapacity(db)
            return result
        }
    }

    private func evictOverCapacity(_ db: Database) throws -> Int {
        var over = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM outbox")! - capacity
        guard over > 0 else { return 0 }
        var evicted = 0
        for kind in [SightingKind.update, .exit] where over > 0 {
            try db.execute(
                sql: "DELETE FROM outbox WHERE seq IN (SELECT seq FROM outbox WHERE kind = ? ORDER BY seq LIMIT ?)",
                arguments: [kind.rawValue, over])
            evicted += db.changesCount
            over -= db.changesCount
        }
        try db.execute(
            sql:
                "INSERT INTO counters VALUES ('evicted', ?) ON CONFLICT(name) DO UPDATE SET value = value + excluded.value",
            arguments: [evicted])
        return evicted
    }

    /// The oldest sighting `sink` is owed: each sink's poster sends strictly in order.
    public func oldest(for sink: String) throws(OutboxError) -> OutboxEntry? {
        try read { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT o.seq, o.sightingId, o.kind, o.body, o.createdAt, w.attempts, o.pendingFirstSeen,
                        o.pendingLastSeen, o.pendingQueuedAt, o.pendingBootId, o.pendingOffset
                    FROM owed w JOIN outbox o ON o.seq = w.seq WHERE w.sink = ? ORDER BY w.seq LIMIT 1
                    """, arguments: [sink]
            ).map(OutboxEntry.init(row:))
        }
    }

    /// The sighting's times are settled (`SightingClock`): its body now carries them, and it is sent as any other.
    public func settleTime(_ entry: OutboxEntry, body: String) throws(OutboxError) {
        try write { db in
            try db.execute(
                sql: """
                    UPDATE outbox SET body = ?, pendingFirstSeen = NULL, pendingLastSeen = NULL, pendingQueuedAt = NULL,
                        pendingBootId = NULL, pendingOffset = NULL WHERE seq = ?
                    """, arguments: [body, entry.sequence])
        }
    }

    /// How many sightings wait for the clock.
    public func pendingTimes() throws(OutboxError) -> Int {
        try read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM outbox WHERE pendingQueuedAt IS NOT NULL") ?? 0
        }
    }

    /// `sink` took it: no longer owed to it; once no sink is owed it, gone from the queue and remembered as
    /// delivered.
    public func markDelivered(_ entry: OutboxEntry, sink: String, now: Int64) throws(OutboxError) {
        try write { db in
            try db.execute(sql: "DELETE FROM owed WHERE sink = ? AND seq = ?", arguments: [sink, entry.sequence])
            guard try Self.retire(entry, db) else { return }
            try db.execute(
                sql: "INSERT OR REPLACE INTO delivered (sightingId, deliveredAt) VALUES (?, ?)",
                arguments: [entry.sightingID, now])
            // Forget the oldest deliveries beyond the memory bound (cheap: the index is on deliveredAt).
            try db.execute(
                sql: """
                    DELETE FROM delivered WHERE sightingId IN
                        (SELECT sightingId FROM delivered ORDER BY deliveredAt DESC LIMIT -1 OFFSET ?)
                    """, arguments: [Self.deliveredMemory])
        }
    }

    /// A delivery attempt to `sink` failed in a way worth retrying: count it and keep the sighting first in its line.
    public func markAttempt(_ entry: OutboxEntry, sink: String, error: String) throws(OutboxError) {
        try write { db in
            try db.execute(
                sql: "UPDATE owed SET attempts = attempts + 1, lastError = ? WHERE sink = ? AND seq = ?",
                arguments: [error, sink, entry.sequence])
        }
    }

    /// `sink` refused it for good (the registry's 4xx other than 408 and 429): no longer owed to it, and one of its
    /// dead letters; gone from the queue once no sink is owed it.
    public func markDead(_ entry: OutboxEntry, sink: String, status: Int?, reason: String, now: Int64)
        throws(OutboxError)
    {
        try write { db in
            try db.execute(sql: "DELETE FROM owed WHERE sink = ? AND seq = ?", arguments: [sink, entry.sequence])
            try db.execute(
                sql: """
                    INSERT OR REPLACE INTO deadLetter (sink, sightingId, kind, body, createdAt, failedAt, status, reason)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    sink, entry.sightingID, entry.kind.rawValue, entry.body, entry.createdAt, now, status, reason,
                ])
            try Self.retire(entry, db)
        }
    }

    /// Removes the sighting from the queue if no sink is owed it any more; whether it did.
    @discardableResult
    private static func retire(_ entry: OutboxEntry, _ db: Database) throws -> Bool {
        try db.execute(
            sql: "DELETE FROM outbox WHERE seq = ?1 AND NOT EXISTS (SELECT 1 FROM owed WHERE seq = ?1)",
            arguments: [entry.sequence])
        return db.changesCount == 1
    }

    /// Puts every dead letter back in the queue, owed to the sink that refused it, oldest first, once whatever made
    /// it refuse them is fixed (`beacond retry-dead-letters`). Returns how many went back.
    @discardableResult
    public func requeueDeadLetters() throws(OutboxError) -> Int {
        try write { db in
            // A sighting another sink is still owed is in the queue already; the rest come back at its end.
            try db.execute(
                sql: """
                    INSERT OR IGNORE INTO outbox (sightingId, kind, body, createdAt)
                        SELECT sightingId, kind, body, MIN(createdAt) FROM deadLetter
                        GROUP BY sightingId ORDER BY MIN(createdAt), MIN(failedAt)
                    """)
            try db.execute(
                sql: """
                    INSERT OR IGNORE INTO owed (sink, seq)
                        SELECT d.sink, o.seq FROM deadLetter d JOIN outbox o ON o.sightingId = d.sightingId
                    """)
            let requeued = db.changesCount
            try db.execute(sql: "DELETE FROM deadLetter")
            return requeued
        }
    }

    /// The queue as a whole (`depth`: sightings some sink is still owed) and each configured sink's share of it.
    public func statistics() throws(OutboxError) -> OutboxStatistics {
        try read { db in
            var statistics = OutboxStatistics(
                depth: try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM outbox")!,
                deadLetters: try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM deadLetter")!,
                evicted: try Int.fetchOne(db, sql: "SELECT value FROM counters WHERE name = 'evicted'") ?? 0,
                oldestCreatedAt: try Int64.fetchOne(db, sql: "SELECT MIN(createdAt) FROM outbox"))
            for sink in sinks {
                let first = try Row.fetchOne(
                    db, sql: "SELECT attempts, lastError FROM owed WHERE sink = ? ORDER BY seq LIMIT 1",
                    arguments: [sink])
                statistics.sinks.append(
                    SinkBacklog(
                        sink: sink,
                        depth: try Int.fetchOne(
                            db, sql: "SELECT COUNT(*) FROM owed WHERE sink = ?", arguments: [sink])!,
                        deadLetters: try Int.fetchOne(
                            db, sql: "SELECT COUNT(*) FROM deadLetter WHERE sink = ?", arguments: [sink])!,
                        attempts: first?["attempts"] ?? 0, lastError: first?["lastError"]))
            }
            return statistics
        }
    }

    /// The most recent dead letters, newest first.
    public func deadLetters(limit: Int = 20) throws(OutboxError) -> [DeadLetter] {
        try read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT sink, sightingId, kind, failedAt, status, reason FROM deadLetter
                    ORDER BY failedAt DESC, sink LIMIT ?
                    """,
                arguments: [limit]
            ).map { row in
                DeadLetter(
                    sink: row["sink"], sightingID: row["sightingId"],
                    kind: SightingKind(rawValue: row["kind"]) ?? .update, failedAt: row["failedAt"],
                    status: row["status"], reason: row["reason"])
            }
        }
    }

    /// How many sightings were journalled with `seenAt` at or after `since`, and the latest `limit` of them,
    /// newest first, each with how far its delivery has got.
    public func journal(since: Int64, limit: Int = 10) throws(OutboxError) -> (count: Int, recent: [JournalEntry]) {
        try read { db in
            let count =
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM journal WHERE seenAt >= ?", arguments: [since]) ?? 0
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT j.*,
                        CASE WHEN EXISTS(SELECT 1 FROM outbox o WHERE o.sightingId = j.sightingId) THEN 'queued'
                             WHEN EXISTS(SELECT 1 FROM delivered d WHERE d.sightingId = j.sightingId) THEN 'delivered'
                             WHEN EXISTS(SELECT 1 FROM deadLetter x WHERE x.sightingId = j.sightingId) THEN 'dead'
                             ELSE 'evicted' END AS delivery
                    FROM journal j ORDER BY seenAt DESC, sightingId LIMIT ?
                    """, arguments: [limit])
            return (
                count,
                rows.map { row in
                    JournalEntry(
                        sightingID: row["sightingId"], kind: SightingKind(rawValue: row["kind"]) ?? .update,
                        bikeID: row["bikeId"], seenAt: row["seenAt"], rssi: row["rssi"], proximity: row["proximity"],
                        delivery: JournalEntry.Delivery(rawValue: row["delivery"]) ?? .queued)
                }
            )
        }
    }

    /// Closes the connection. Every committed sighting is already in the one file. Every call after this fails.
    public func close() throws(OutboxError) {
        do {
            try pool.close()
        } catch {
            throw OutboxError(.write, path: path, cause: error)
        }
    }

    /// A read, its errors said as the outbox's.
    private func read<T>(_ body: (Database) throws -> T) throws(OutboxError) -> T {
        do {
            return try pool.read(body)
        } catch {
            throw OutboxError(.read, path: path, cause: error)
        }
    }

    /// A write in one transaction, its errors said as the outbox's.
    @discardableResult
    private func write<T>(_ body: (Database) throws -> T) throws(OutboxError) -> T {
        do {
            return try pool.write(body)
        } catch {
            throw OutboxError(.write, path: path, cause: error)
        }
    }
}
