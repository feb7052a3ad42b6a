import Foundation
import ListChanges
import NIOConcurrencyHelpers
import NIOCore

/// The lists served lately, each by its ETag, so that a station holding one is sent only what changed since (`226 IM
/// Used`, `ListChanges`) rather than the whole list. Bounded by a number of lists and the bytes their entries take
/// (`--list-history`, `--list-history-bytes`): a station that holds an older one gets the whole list. The changes
/// from a held list to the one served are worked out, encoded and gzipped once, however many stations ask, and
/// from memory: no database read. Every server of one database holds the lists it has served, each the same bytes
/// under the same ETag (the list is in the ids' byte order), so two servers answer one version with one change.
final class ListHistory: Sendable {
    /// The changes from one list to another, as sent.
    struct Encoded: Sendable {
        var body: ByteBuffer
        var gzipped: ByteBuffer
    }

    private struct Held {
        var etag: String
        var entries: [ListedEntry]
        var bytes: Int
    }

    private struct State {
        /// Oldest first.
        var held: [Held] = []
        var bytes = 0
        /// The changes worked out, by the ETags they are from and to: only those to the newest list served are kept.
        var encoded: [String: Task<Encoded, any Error>] = [:]
        var encodedTo: String?
    }

    private let state = NIOLockedValueBox(State())
    let versions: Int
    let bytes: Int

    /// - Parameters: versions, bytes: the most lists held, and the most their entries take (counted as their
    ///   fields' bytes and a little for each entry).
    init(versions: Int = 96, bytes: Int = 64 << 20) {
        self.versions = max(1, versions)
        self.bytes = bytes
    }

    /// Holds a list that is being served, the oldest let go past the bounds.
    func hold(_ list: RegistrySnapshot.List) {
        let size = Self.size(list.entries)
        state.withLockedValue { state in
            guard !state.held.contains(where: { $0.etag == list.etag }) else { return }
            state.held.append(Held(etag: list.etag, entries: list.entries, bytes: size))
            state.bytes += size
            while state.held.count > versions || (state.bytes > bytes && state.held.count > 1) {
                state.bytes -= state.held.removeFirst().bytes
            }
        }
    }

    /// How many lists are held, and their entries' bytes.
    var held: (lists: Int, bytes: Int) { state.withLockedValue { ($0.held.count, $0.bytes) } }

    /// The changes from the list `etag` names to `list`, encoded; nil when that list is not held (too old, or from a
    /// server that has not served it), when it is `list` itself, when the changes would not be smaller than the whole
    /// list, or when they could not be encoded: the whole list is the answer then.
    func changes(from etag: String, to list: RegistrySnapshot.List) async -> Encoded? {
        guard etag != list.etag else { return nil }
        let key = etag + " " + list.etag
        let task = state.withLockedValue { state -> Task<Encoded, any Error>? in
            if let task = state.encoded[key] { return task }
            guard let from = state.held.last(where: { $0.etag == etag }) else { return nil }
            if state.encodedTo != list.etag {
                state.encoded = [:]
                state.encodedTo = list.etag
            }
            let task = Task {
                let changes = ListChanges.between(from.entries, list.entries, version: list.etag)
                let body = ByteBuffer(bytes: try JSONBody.encoder.encode(changes))
                return Encoded(body: body, gzipped: try GzipBody.compress(body))
            }
            state.encoded[key] = task
            return task
        }
        guard let task, let encoded = try? await task.value else { return nil }
        return encoded.body.readableBytes < list.body.readableBytes ? encoded : nil
    }

    private static func size(_ entries: [ListedEntry]) -> Int {
        entries.reduce(0) { total, entry in
            let texts = [entry.uuid, entry.make, entry.model, entry.colour].reduce(entry.id.utf8.count) {
                $0 + ($1?.utf8.count ?? 0)
            }
            return total + 64 + texts + entry.identities.count * 4
        }
    }
}
