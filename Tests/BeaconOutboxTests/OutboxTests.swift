import BeaconEngine
import BeaconOutbox
import BeaconTestSupport
import Foundation
import GRDB
import Testing

@Suite(.timeLimit(.minutes(20))) struct OutboxTests {
    static func item(_ n: Int, _ kind: SightingKind = .enter) -> OutboxItem {
        OutboxItem(sightingID: "s-\(n)", kind: kind, body: "{\"n\":\(n)}")
    }

    @Test func oldestFirstAndGoneOnlyWhenDelivered() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let outbox = try Outbox(path: directory.file("outbox.sqlite"))
        try outbox.enqueue([Self.item(1), Self.item(2), Self.item(3)], now: 1)
        let first = try #require(try outbox.oldest(for: Outbox.registry))
        #expect(first.sightingID == "s-1" && first.body == "{\"n\":1}")
        try outbox.markAttempt(first, sink: Outbox.registry, error: "timed out")
        #expect(try outbox.oldest(for: Outbox.registry)?.sightingID == "s-1", "a failed attempt keeps it first in line")
        #expect(try outbox.oldest(for: Outbox.registry)?.attempts == 1)
        try outbox.markDelivered(first, sink: Outbox.registry, now: 2)
        #expect(try outbox.oldest(for: Outbox.registry)?.sightingID == "s-2")
        #expect(try outbox.statistics().depth == 2)
    }

    @Test func theSameSightingIsNeverQueuedTwice() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let outbox = try Outbox(path: directory.file("outbox.sqlite"))
        #expect(try outbox.enqueue([Self.item(1), Self.item(1)], now: 1).inserted == 1)
        try outbox.markDelivered(try #require(try outbox.oldest(for: Outbox.registry)), sink: Outbox.registry, now: 2)
        // A restart replaying the same capture produces it again: it was delivered, so it is not queued.
        let again = try outbox.enqueue([Self.item(1)], now: 3)
        #expect(again.inserted == 0 && again.duplicates == 1)
        #expect(try outbox.oldest(for: Outbox.registry) == nil)
    }

    @Test func refusedSightingsGoToDeadLetters() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let outbox = try Outbox(path: directory.file("outbox.sqlite"))
        try outbox.enqueue([Self.item(1), Self.item(2)], now: 1)
        try outbox.markDead(
            try #require(try outbox.oldest(for: Outbox.registry)), sink: Outbox.registry, status: 422,
            reason: "HTTP 422", now: 5)
        #expect(try outbox.oldest(for: Outbox.registry)?.sightingID == "s-2")
        let dead = try outbox.deadLetters()
        #expect(dead.map(\.sightingID) == ["s-1"] && dead.first?.status == 422)
        #expect(try outbox.statistics().deadLetters == 1)
        #expect(try outbox.enqueue([Self.item(1)], now: 6).inserted == 0)
    }

    @Test func whenFullUpdatesGoFirstThenExitsAndEntersNever() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let outbox = try Outbox(path: directory.file("outbox.sqlite"), capacity: 4)
        try outbox.enqueue(
            [Self.item(1, .enter), Self.item(2, .update), Self.item(3, .exit), Self.item(4, .update)], now: 1)
        #expect(try outbox.enqueue([Self.item(5, .enter)], now: 2).evicted == 1)
        var remaining: [String] = []
        while let entry = try outbox.oldest(for: Outbox.registry) {
            remaining.append(entry.sightingID)
            try outbox.markDelivered(entry, sink: Outbox.registry, now: 3)
        }
        #expect(remaining == ["s-1", "s-3", "s-4", "s-5"], "the oldest update went")
        try outbox.enqueue((10..<16).map { Self.item($0, .enter) }, now: 4)
        try outbox.enqueue([Self.item(20, .exit)], now: 5)
        let statistics = try outbox.statistics()
        #expect(statistics.depth == 6, "enters are never evicted, even past the bound; the exit was")
        #expect(statistics.evicted == 2)
    }

    @Test func survivesReopeningAndKeepsCommitsInItsOwnFile() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("outbox.sqlite")
        do {
            let outbox = try Outbox(path: path)
            try outbox.enqueue([Self.item(1), Self.item(2)], now: 1)
        }
        let reopened = try Outbox(path: path)
        #expect(try reopened.statistics().depth == 2)
        let mode = try DatabaseQueue(path: path).read { try String.fetchOne($0, sql: "PRAGMA journal_mode") }
        #expect(mode == "delete")
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
    }

    /// An outbox an older beacond left in WAL mode, its last commits still in the -wal: opened, they are kept, and
    /// the outbox leaves WAL.
    @Test func anOutboxInWALModeIsCarriedOver() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("outbox.sqlite")
        do {
            _ = try Outbox(path: path)
        }
        // As the previous release left it: WAL, with rows only in the -wal (no checkpoint: a crash).
        let writer = try DatabaseQueue(path: path)
        try writer.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: "PRAGMA wal_autocheckpoint = 0")
            try db.execute(
                sql: "INSERT INTO outbox (sightingId, kind, body, createdAt) VALUES ('s-old', 'enter', '{}', 1)")
            try db.execute(sql: "INSERT INTO owed (sink, seq) SELECT 'registry', seq FROM outbox")
        }
        let walSize = (try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
        #expect(walSize > 0, "the row is in the -wal")
        let copy = directory.file("copy.sqlite")
        for suffix in ["", "-wal"] { try FileManager.default.copyItem(atPath: path + suffix, toPath: copy + suffix) }
        let outbox = try Outbox(path: copy)
        #expect(try outbox.oldest(for: Outbox.registry)?.sightingID == "s-old")
        try outbox.close()
        #expect(!FileManager.default.fileExists(atPath: copy + "-wal"), "the outbox left WAL mode")
        try writer.close()
    }

    /// A sighting heard before the clock was synchronised keeps its monotonic times through the queue until they are
    /// settled; then it is an ordinary row.
    @Test func pendingTimesAreKeptUntilSettled() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("outbox.sqlite")
        let pending = PendingTime(firstSeen: 1, lastSeen: 2, queuedAt: 3, bootID: "boot", offset: -4)
        do {
            var item = Self.item(1)
            item.pendingTime = pending
            try Outbox(path: path).enqueue([item, Self.item(2)], now: 1)
        }
        let outbox = try Outbox(path: path)
        let oldest = try #require(try outbox.oldest(for: Outbox.registry))
        #expect(oldest.pendingTime == pending)
        #expect(try outbox.pendingTimes() == 1)
        try outbox.settleTime(oldest, body: "{\"settled\":true}")
        let settled = try #require(try outbox.oldest(for: Outbox.registry))
        #expect(settled.pendingTime == nil && settled.body == "{\"settled\":true}")
        #expect(try outbox.pendingTimes() == 0)
    }

    @Test func anUnopenableOutboxIsAClearError() {
        #expect {
            try Outbox(path: "/nonexistent/dir/outbox.sqlite")
        } throws: { error in
            "\(error)".hasPrefix("/nonexistent/dir/outbox.sqlite: cannot open the outbox")
        }
    }
}
