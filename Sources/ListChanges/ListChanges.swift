/// What changed in the stations' list from one version (the ETag a station holds) to another: the bikes removed, the
/// bikes added or replaced whole, and for each rotating bike whose window moved, the identities it dropped and the
/// ones it gained. With the list's count and checksum as it stands after, which the station checks once applied
/// (docs/registry-api.yaml, ListChanges; docs/station.md).
///
/// A window's move is the commonest change by far (every rotating bike, every period), so it is written as bytes,
/// not objects: for each rotating bike kept (in both lists, not replaced), in the byte order of its id, one byte
/// `n`, then `n` identities dropped and `n` gained, four bytes each, big-endian (`moves`, base64 in the JSON). A
/// bike whose window did not move has `n = 0`; one whose identities changed otherwise is replaced.
public struct ListChanges: Sendable, Equatable {
    /// The ETag of the list the changes lead to.
    public var version: String
    /// `ListChecksum` of the list after the changes.
    public var checksum: String
    /// Bikes in the list after the changes.
    public var count: Int
    public var removed: [String]
    /// New bikes, and bikes replaced whole (by their id).
    public var added: [ListedEntry]
    public var moves: [UInt8]

    public init(
        version: String, checksum: String, count: Int, removed: [String], added: [ListedEntry], moves: [UInt8]
    ) {
        self.version = version
        self.checksum = checksum
        self.count = count
        self.removed = removed
        self.added = added
        self.moves = moves
    }

    /// The changes from `old` to `new` (each a whole list, in any order), leading to `version`.
    public static func between(_ old: [ListedEntry], _ new: [ListedEntry], version: String) -> ListChanges {
        var before: [String: ListedEntry] = [:]
        for entry in old { before[entry.id] = entry }
        var checksum = ListChecksum()
        var added: [ListedEntry] = []
        var kept: [(old: ListedEntry, new: ListedEntry)] = []
        var present = Set<String>()
        for entry in new {
            checksum.add(entry)
            present.insert(entry.id)
            guard let previous = before[entry.id] else {
                added.append(entry)
                continue
            }
            if previous.isRotating && entry.isRotating && previous.sameBeyondIdentities(entry),
                Move(from: previous.identities, to: entry.identities) != nil
            {
                kept.append((previous, entry))
            } else if previous != entry {
                added.append(entry)
            }
        }
        var moves: [UInt8] = []
        for (previous, entry) in kept.sorted(by: { ListedEntry.idOrder($0.new.id, $1.new.id) }) {
            Move(from: previous.identities, to: entry.identities)?.append(to: &moves)
        }
        let removed = old.map(\.id).filter { !present.contains($0) }.sorted(by: ListedEntry.idOrder)
        return ListChanges(
            version: version, checksum: checksum.description, count: new.count, removed: removed,
            added: added.sorted { ListedEntry.idOrder($0.id, $1.id) }, moves: moves)
    }

    /// One kept rotating bike's move: the identities it dropped and gained, as many of each, at most 255.
    struct Move: Equatable {
        var dropped: [UInt32]
        var gained: [UInt32]

        init?(from old: [UInt32], to new: [UInt32]) {
            let (before, after) = (Set(old), Set(new))
            guard before.count == old.count, after.count == new.count else { return nil }
            dropped = before.subtracting(after).sorted()
            gained = after.subtracting(before).sorted()
            guard dropped.count == gained.count, dropped.count <= 255 else { return nil }
        }

        init(dropped: [UInt32], gained: [UInt32]) {
            self.dropped = dropped
            self.gained = gained
        }

        func append(to bytes: inout [UInt8]) {
            bytes.append(UInt8(dropped.count))
            for identity in dropped + gained {
                bytes += [
                    UInt8(identity >> 24), UInt8(identity >> 16 & 0xFF), UInt8(identity >> 8 & 0xFF),
                    UInt8(identity & 0xFF),
                ]
            }
        }

        /// The identities after the move: the old ones, less those dropped, and those gained, in the old order.
        func applied(to identities: [UInt32]) -> [UInt32]? {
            let dropping = Set(dropped)
            let kept = identities.filter { !dropping.contains($0) }
            guard kept.count == identities.count - dropped.count else { return nil }
            return kept + gained
        }
    }
}
