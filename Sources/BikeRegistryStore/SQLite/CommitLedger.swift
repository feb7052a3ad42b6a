import BikeRegistryCore
import Foundation
import GRDB
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#endif

/// What a SQLite registry has committed, counted by the database itself and noted beside it, so that committed data
/// that vanishes is noticed at the next start instead of served as if nothing happened.
///
/// In WAL mode a commit lives in `registry.sqlite-wal` until a checkpoint copies it into the database file. If that
/// file is deleted or replaced after a crash (an operator tidying up, a backup restored without it), every commit
/// since the last checkpoint is gone without a word: sightings and registrations answered 201, new owner links
/// (whose owners then get 401). Triggers count each kind of change in the same transaction as the change
/// (`commitCount`, migration v4); after each commit the counts are written to `registry.sqlite-commits`. At open,
/// counts in that file above the database's are what was lost, and are logged as an error naming them.
///
/// The file is written after each commit without fsync: a crash of the process leaves it in the page cache, so it
/// is never behind by more than the commit in flight, and a power cut can only leave it behind the database (which
/// syncs its own), never ahead of it, so it never reports a loss that did not happen.
final class CommitLedger: Sendable {
    /// The counters, in the order the file lists them.
    static let names = [
        "sightings", "registrations", "bikeChanges", "bikeDeletions", "stationChanges", "notifications",
        "notificationAttempts",
    ]
    /// The file's fixed size: written whole at offset 0 each time, so no write leaves a longer old one's tail.
    private static let size = 512

    let path: String
    private let state: NIOLockedValueBox<(descriptor: Int32, noted: [String: Int64])>

    /// Opens (or creates, with `mode`) the file beside the database; nil when it cannot be (the database works
    /// without it, unguarded).
    init?(databasePath: String, mode: mode_t) {
        path = databasePath + "-commits"
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, mode)
        guard descriptor >= 0 else { return nil }
        _ = fchmod(descriptor, mode)
        state = NIOLockedValueBox((descriptor, [:]))
    }

    deinit { state.withLockedValue { _ = close($0.descriptor) } }

    /// The counts the file holds; empty when it is new or unreadable.
    func read() -> [String: Int64] {
        state.withLockedValue { state in
            var buffer = [UInt8](repeating: 0, count: Self.size)
            let count = pread(state.descriptor, &buffer, buffer.count, 0)
            guard count > 0 else { return [:] }
            return Self.parse(String(decoding: buffer[..<count], as: UTF8.self))
        }
    }

    /// Notes counts read inside a committed transaction. Counts only grow; the larger of each is kept, since two
    /// commits' notes can arrive out of order.
    func note(_ counts: [String: Int64]) {
        state.withLockedValue { state in
            var changed = false
            for (name, value) in counts where value > state.noted[name, default: -1] {
                state.noted[name] = value
                changed = true
            }
            guard changed else { return }
            var text = Self.names.map { "\($0)=\(state.noted[$0, default: 0])" }.joined(separator: " ") + "\n"
            text += String(repeating: " ", count: max(0, Self.size - text.utf8.count - 1)) + "\n"
            _ = text.utf8CString.withUnsafeBufferPointer { pwrite(state.descriptor, $0.baseAddress, $0.count - 1, 0) }
        }
    }

    static func parse(_ text: String) -> [String: Int64] {
        var counts: [String: Int64] = [:]
        for field in text.split(whereSeparator: \.isWhitespace) {
            let parts = field.split(separator: "=", maxSplits: 1)
            if parts.count == 2, names.contains(String(parts[0])), let value = Int64(parts[1]) {
                counts[String(parts[0])] = value
            }
        }
        return counts
    }

    /// The database's own counts.
    static func counts(_ db: Database) throws -> [String: Int64] {
        var counts: [String: Int64] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT name, value FROM commitCount") {
            counts[row[0]] = row[1]
        }
        return counts
    }

    /// What the file says was committed and the database no longer has, as an operator reads it: "12 sightings,
    /// 1 registration"; empty when nothing is missing.
    static func lost(noted: [String: Int64], held: [String: Int64]) -> String {
        let said = [
            "sightings": ("sighting", "sightings"), "registrations": ("registration", "registrations"),
            "bikeChanges": ("owner's change", "owners' changes"), "bikeDeletions": ("bike deleted", "bikes deleted"),
            "stationChanges": ("station change", "station changes"),
            "notifications": ("notification owed", "notifications owed"),
            "notificationAttempts": ("delivery attempt", "delivery attempts"),
        ]
        return names.compactMap { name in
            let missing = noted[name, default: 0] - held[name, default: 0]
            guard missing > 0, let (one, many) = said[name] else { return nil }
            return "\(missing) \(missing == 1 ? one : many)"
        }.joined(separator: ", ")
    }
}
