import BeaconTestSupport
import Foundation
import GRDB
import RegistryTestServer
import Testing

/// A cache or an outbox that beacond cannot read at start (a power cut mid-write on a cheap SD card, a
/// restore from a bad backup): each is moved aside with a log line naming where to, and the daemon starts.
@Suite(.timeLimit(.minutes(20))) struct DamagedStateTests {
    @Test func damagedCacheAndOutboxAreMovedAsideAndTheDaemonStarts() async throws {
        let cafe = try await CafeRun.start("beacond-damaged")
        try await withTeardown({ await cafe.stop() }) {
            let expected = try await CafeRun.expectedSightingIDs()

            // A first run leaves a bike cache and an outbox in the state directory.
            let first = try cafe.launch(["--exit-when-drained"], name: "first")
            #expect(await first.waitForExit(seconds: 60) == 0, "\(first.stderr)")
            let cachePath = cafe.state + "/missing-bikes.json"
            let outboxPath = cafe.state + "/outbox.sqlite"
            let cache = try Data(contentsOf: URL(fileURLWithPath: cachePath))

            // The cache cut in half; the outbox overwritten with bytes that are not a database.
            try cache.prefix(cache.count / 2).write(to: URL(fileURLWithPath: cachePath))
            let garbage = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 7919 >> 3) })
            try garbage.write(to: URL(fileURLWithPath: outboxPath))
            let second = try cafe.launch(["--exit-when-drained"], name: "second")
            #expect(
                await second.waitForExit(seconds: 60) == 0, "the daemon did not start and finish:\n\(second.stderr)")
            let log = second.stderr
            #expect(log.contains("outbox damaged; moved aside"), "\(log)")
            #expect(log.contains("bike cache damaged; moved aside"), "\(log)")
            let moved = try FileManager.default.contentsOfDirectory(atPath: cafe.state).filter {
                $0.contains(".damaged-")
            }
            let movedOutbox = try #require(
                moved.first { $0.hasPrefix("outbox.sqlite.damaged-") && !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm") }
            )
            let movedCache = try #require(moved.first { $0.hasPrefix("missing-bikes.json.damaged-") })
            #expect(log.contains(movedOutbox) && log.contains(movedCache), "the log names where each went")
            #expect(
                try Data(contentsOf: URL(fileURLWithPath: cafe.state + "/" + movedOutbox)) == garbage,
                "the damaged bytes are kept")
            #expect(
                try Data(contentsOf: URL(fileURLWithPath: cafe.state + "/" + movedCache))
                    == cache.prefix(cache.count / 2))
            #expect(
                try Data(contentsOf: URL(fileURLWithPath: cachePath)) != cache.prefix(cache.count / 2),
                "a good cache replaced it")

            // A real outbox cut short, and one with two pages the card never wrote (zeros where the outbox and
            // journal tables start). SQLite opens the second without complaint; the page check at start finds it.
            // A clean stop checkpoints the outbox into one file, so every page is in it and none in the `-wal`.
            let wal = (try? FileManager.default.attributesOfItem(atPath: outboxPath + "-wal")[.size] as? Int) ?? 0
            #expect(wal == 0, "the outbox was not checkpointed at the clean stop: \(wal) bytes in its -wal")
            let outbox = try Data(contentsOf: URL(fileURLWithPath: outboxPath))
            let roots = try Self.rootPages(
                of: ["outbox", "journal"], in: outbox, scratch: cafe.state + "/pages.sqlite")
            #expect(roots.count == 2, "the outbox has no outbox or journal table: \(roots)")
            var torn = outbox
            for page in roots { torn.replaceSubrange((page - 1) * 4096..<page * 4096, with: Data(count: 4096)) }
            for (name, damaged) in [("truncated", outbox.prefix(outbox.count / 2)), ("torn", torn)] {
                try damaged.write(to: URL(fileURLWithPath: outboxPath))
                let run = try cafe.launch(["--exit-when-drained"], name: name)
                #expect(await run.waitForExit(seconds: 60) == 0, "\(name):\n\(run.stderr)")
                #expect(run.stderr.contains("outbox damaged; moved aside"), "\(name):\n\(run.stderr)")
            }

            // The new outboxes forgot what was delivered, so the sightings went again, under the same ids: the
            // registry, which keys on them, still holds each sighting once.
            #expect(Set(cafe.registry.sightings.keys) == Set(expected))
            #expect(cafe.registry.posts.count == 4 * expected.count)
        }
    }

    /// The pages where the named tables start, read from a copy so the outbox itself gets no `-wal` or `-shm`.
    /// (Fixed page numbers broke: how many pages the outbox has depends on how the first run's deliveries fell.)
    static func rootPages(of tables: [String], in database: Data, scratch: String) throws -> [Int] {
        try database.write(to: URL(fileURLWithPath: scratch))
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: scratch + suffix) } }
        let queue = try DatabaseQueue(path: scratch)
        defer { try? queue.close() }
        return try queue.read { db in
            try tables.compactMap {
                try Int.fetchOne(
                    db, sql: "SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name = ?", arguments: [$0])
            }
        }
    }
}
