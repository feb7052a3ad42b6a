import GRDB

/// The outbox's schema, one migration per change, each kept as it first shipped: an outbox from any earlier release
/// is carried forward, never rebuilt.
extension Outbox {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        for (name, sql) in migrations {
            migrator.registerMigration(name) { db in try db.execute(sql: sql) }
        }
        return migrator
    }

    /// In the order they run.
    private static let migrations: [(name: String, sql: String)] = [
        ("v1", v1), ("v2-journal", journal), ("v3-pending-time", pendingTime), ("v4-sinks", perSink),
    ]

    /// The queue, its dead letters, what was delivered (for idempotence across restarts) and the counters.
    private static let v1 = """
        CREATE TABLE outbox (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            sightingId TEXT NOT NULL UNIQUE,
            kind TEXT NOT NULL,
            body TEXT NOT NULL,
            createdAt INTEGER NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            lastError TEXT
        );
        CREATE INDEX outbox_kind ON outbox(kind, seq);
        CREATE TABLE deadLetter (
            sightingId TEXT PRIMARY KEY,
            kind TEXT NOT NULL,
            body TEXT NOT NULL,
            createdAt INTEGER NOT NULL,
            failedAt INTEGER NOT NULL,
            status INTEGER,
            reason TEXT NOT NULL
        );
        CREATE TABLE delivered (
            sightingId TEXT PRIMARY KEY,
            deliveredAt INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX delivered_age ON delivered(deliveredAt);
        CREATE TABLE counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
        """

    /// The journal `status` reads ("today's sightings and the last ten"): small, pruned at each enqueue.
    private static let journal = """
        CREATE TABLE journal (
            sightingId TEXT PRIMARY KEY,
            kind TEXT NOT NULL,
            bikeId TEXT NOT NULL,
            seenAt INTEGER NOT NULL,
            rssi REAL,
            proximity TEXT NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX journal_seen ON journal(seenAt);
        """

    /// Sightings heard before the system clock was synchronised wait with their monotonic times (PendingTime);
    /// NULL for every other row, so an older outbox is carried over as it is.
    private static let pendingTime = """
        ALTER TABLE outbox ADD COLUMN pendingFirstSeen INTEGER;
        ALTER TABLE outbox ADD COLUMN pendingLastSeen INTEGER;
        ALTER TABLE outbox ADD COLUMN pendingQueuedAt INTEGER;
        ALTER TABLE outbox ADD COLUMN pendingBootId TEXT;
        ALTER TABLE outbox ADD COLUMN pendingOffset INTEGER;
        """

    /// A delivery state per sink (`owed`): what each sink is still owed, with its own attempts and last error.
    /// Every queued sighting of an older outbox is owed to the registry, with the attempts it had; its dead
    /// letters are the registry's. (DROP COLUMN needs SQLite 3.35; bookworm has 3.40.)
    private static let perSink = """
        CREATE TABLE owed (
            sink TEXT NOT NULL,
            seq INTEGER NOT NULL REFERENCES outbox(seq) ON DELETE CASCADE,
            attempts INTEGER NOT NULL DEFAULT 0,
            lastError TEXT,
            PRIMARY KEY (sink, seq)
        ) WITHOUT ROWID;
        CREATE INDEX owed_seq ON owed(seq);
        INSERT INTO owed (sink, seq, attempts, lastError)
            SELECT 'registry', seq, attempts, lastError FROM outbox;
        ALTER TABLE outbox DROP COLUMN attempts;
        ALTER TABLE outbox DROP COLUMN lastError;
        CREATE TABLE deadLetterBySink (
            sink TEXT NOT NULL,
            sightingId TEXT NOT NULL,
            kind TEXT NOT NULL,
            body TEXT NOT NULL,
            createdAt INTEGER NOT NULL,
            failedAt INTEGER NOT NULL,
            status INTEGER,
            reason TEXT NOT NULL,
            PRIMARY KEY (sink, sightingId)
        );
        INSERT INTO deadLetterBySink
            SELECT 'registry', sightingId, kind, body, createdAt, failedAt, status, reason FROM deadLetter;
        DROP TABLE deadLetter;
        ALTER TABLE deadLetterBySink RENAME TO deadLetter;
        CREATE INDEX deadLetter_sighting ON deadLetter(sightingId);
        """
}
