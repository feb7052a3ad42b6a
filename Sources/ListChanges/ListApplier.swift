/// Applies changes to the list a station holds, an entry at a time, so the list is never held whole: each old
/// entry given to `apply` comes back as it stands after the changes (or nil when removed or replaced), and `added`
/// then gives the new and replacing ones. The kept rotating bikes' moves are named by their order, so the applier
/// is made with the ids of the rotating bikes the station holds (a first look at its list).
public struct ListApplier: Sendable {
    public let changes: ListChanges
    /// Ids removed, and ids replaced whole: their old entries go.
    private let leaving: Set<String>
    private let moves: [String: ListChanges.Move]

    /// Throws when the moves do not fit the rotating bikes held: another list's changes, or damaged ones.
    public init(_ changes: ListChanges, rotatingIDs: [String]) throws(ListChangesError) {
        self.changes = changes
        let leaving = Set(changes.removed).union(changes.added.map(\.id))
        self.leaving = leaving
        let kept = rotatingIDs.filter { !leaving.contains($0) }.sorted(by: ListedEntry.idOrder)
        var moves: [String: ListChanges.Move] = [:]
        var reader = MoveReader(bytes: changes.moves)
        for id in kept {
            guard let move = try reader.next() else { throw ListChangesError("the moves end before the bike \(id)") }
            if !move.dropped.isEmpty { moves[id] = move }
        }
        guard reader.atEnd else { throw ListChangesError("the moves name more rotating bikes than are held") }
        self.moves = moves
    }

    /// The entry as it stands after the changes; nil when it is removed or replaced.
    public func apply(_ entry: ListedEntry) throws(ListChangesError) -> ListedEntry? {
        guard !leaving.contains(entry.id) else { return nil }
        guard let move = moves[entry.id] else { return entry }
        guard let identities = move.applied(to: entry.identities) else {
            throw ListChangesError("the bike \(entry.id) holds no identity its move drops")
        }
        var moved = entry
        moved.identities = identities
        return moved
    }

    /// The entries new to the list, or replacing old ones.
    public var added: [ListedEntry] { changes.added }
}

/// Changes that do not fit the list they are applied to.
public struct ListChangesError: Error, Equatable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// The moves' bytes read a bike at a time.
struct MoveReader {
    let bytes: [UInt8]
    var offset = 0

    var atEnd: Bool { offset == bytes.count }

    mutating func next() throws(ListChangesError) -> ListChanges.Move? {
        guard offset < bytes.count else { return nil }
        let count = Int(bytes[offset])
        offset += 1
        guard offset + count * 8 <= bytes.count else { throw ListChangesError("the moves are cut short") }
        func identity(_ at: Int) -> UInt32 {
            UInt32(bytes[at]) << 24 | UInt32(bytes[at + 1]) << 16 | UInt32(bytes[at + 2]) << 8 | UInt32(bytes[at + 3])
        }
        let dropped = (0..<count).map { identity(offset + $0 * 4) }
        let gained = (0..<count).map { identity(offset + (count + $0) * 4) }
        offset += count * 8
        return ListChanges.Move(dropped: dropped, gained: gained)
    }
}
