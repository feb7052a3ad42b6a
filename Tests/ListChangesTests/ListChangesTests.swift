import Foundation
import ListChanges
import Testing

/// The list's changes, worked out by the registry and applied by a station, without either: any two lists, their
/// changes through JSON, applied an entry at a time to the first in any order, give the second, and its checksum.
/// Each may take five minutes: its property tests take seconds here and several times that on arm64 under qemu
/// (scripts/test-arm64).
@Suite(.timeLimit(.minutes(5))) struct ListChangesTests {
    static let uuid = "21EECF71-D5C7-4A00-9B90-27C94B5146EA"

    /// A list of `fixed` fixed beacons' bikes and `rotating` rotating ones (17 identities each), from a seed.
    static func list(fixed: Int, rotating: Int, using random: inout some RandomNumberGenerator) -> [ListedEntry] {
        (0..<fixed).map { index in
            ListedEntry(
                id: "bike_f\(index)", uuid: uuid, major: 1, minor: index, make: "Triumph", model: "T120",
                colour: "green")
        }
            + (0..<rotating).map { index in
                ListedEntry(
                    id: "bike_r\(index)", uuid: uuid, major: nil, minor: 0,
                    identities: (0..<17).map { _ in UInt32.random(in: 0...UInt32.max, using: &random) }, make: "Honda",
                    model: "CB500", colour: "red")
            }
    }

    /// The next version: windows moved by one (an identity dropped, one gained), some bikes found and some reported.
    static func next(_ list: [ListedEntry], version: Int, using random: inout some RandomNumberGenerator)
        -> [ListedEntry]
    {
        var next = list.compactMap { entry -> ListedEntry? in
            if Int.random(in: 0..<50, using: &random) == 0 { return nil }  // found, or lapsed
            var entry = entry
            if entry.isRotating {
                entry.identities.removeFirst()
                entry.identities.append(UInt32.random(in: 0...UInt32.max, using: &random))
            } else if Int.random(in: 0..<100, using: &random) == 0 {
                entry.colour = "repainted \(version)"
            }
            return entry
        }
        next.append(ListedEntry(id: "bike_new\(version)", uuid: uuid, major: 1, minor: 30_000 + version))
        return next
    }

    static func applied(_ changes: ListChanges, to list: [ListedEntry], shuffled: Bool = true) throws -> [ListedEntry] {
        var random = SystemRandomNumberGenerator()
        let held = shuffled ? list.shuffled(using: &random) : list
        let applier = try ListApplier(changes, rotatingIDs: held.filter(\.isRotating).map(\.id))
        return try held.compactMap { try applier.apply($0) } + applier.added
    }

    static func checksum(_ list: [ListedEntry]) -> String {
        var checksum = ListChecksum()
        for entry in list { checksum.add(entry) }
        return checksum.description
    }

    static func same(_ left: [ListedEntry], _ right: [ListedEntry]) -> Bool {
        func keyed(_ list: [ListedEntry]) -> [String: ListedEntry] {
            Dictionary(
                uniqueKeysWithValues: list.map { entry in
                    var entry = entry
                    entry.identities.sort()
                    return (entry.id, entry)
                })
        }
        return keyed(left) == keyed(right)
    }

    @Test func aHundredVersionsFollowedByTheirChangesEndWhereTheWholeListIs() throws {
        var random = SystemRandomNumberGenerator()
        var registry = Self.list(fixed: 200, rotating: 300, using: &random)
        var station = registry
        for version in 1...100 {
            let next = Self.next(registry, version: version, using: &random)
            let changes = ListChanges.between(registry, next, version: "\"m\(version)\"")
            let sent = try JSONEncoder().encode(changes)
            let received = try JSONDecoder().decode(ListChanges.self, from: sent)
            #expect(received == changes)
            station = try Self.applied(received, to: station)
            #expect(Self.checksum(station) == received.checksum, "version \(version)")
            #expect(station.count == received.count)
            registry = next
        }
        #expect(Self.same(station, registry), "the same bikes, each the same")
        #expect(Self.checksum(station) == Self.checksum(registry))
    }

    @Test func aWindowsMoveIsNineBytesABikeAndNothingElse() throws {
        var random = SystemRandomNumberGenerator()
        let list = Self.list(fixed: 0, rotating: 1_000, using: &random)
        let moved = list.map { entry in
            var entry = entry
            entry.identities.removeFirst()
            entry.identities.append(UInt32.random(in: 0...UInt32.max, using: &random))
            return entry
        }
        let changes = ListChanges.between(list, moved, version: "\"m1-900\"")
        #expect(changes.removed.isEmpty && changes.added.isEmpty)
        #expect(changes.moves.count == 1_000 * 9)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes  // as the registry writes it
        #expect(try encoder.encode(changes).count < 1_000 * 9 * 4 / 3 + 200, "base64, and little more")
        let unchanged = ListChanges.between(list, list, version: "\"m1-900\"")
        #expect(unchanged.moves == [UInt8](repeating: 0, count: 1_000), "a byte a bike whose window stayed")
    }

    @Test func aChecksumNeedsNoOrderButSeesEveryField() {
        let one = ListedEntry(id: "a", uuid: Self.uuid.lowercased(), major: 1, minor: 2, make: "m")
        let two = ListedEntry(id: "b", uuid: Self.uuid, major: nil, minor: 0, identities: [5, 3, 9])
        #expect(Self.checksum([one, two]) == Self.checksum([two, one]))
        var reordered = two
        reordered.identities = [9, 5, 3]
        #expect(Self.checksum([one, reordered]) == Self.checksum([one, two]), "a window's identities are a set")
        var upper = one
        upper.uuid = Self.uuid
        #expect(Self.checksum([upper, two]) == Self.checksum([one, two]), "the UUID's case")
        for changed in [
            ListedEntry(id: "a", uuid: Self.uuid, major: 1, minor: 3, make: "m"),
            ListedEntry(id: "a", uuid: Self.uuid, major: 2, minor: 2, make: "m"),
            ListedEntry(id: "a", uuid: Self.uuid, major: nil, minor: 2, make: "m"),
            ListedEntry(id: "a", uuid: Self.uuid, major: 1, minor: 2, make: "n"),
            ListedEntry(id: "A", uuid: Self.uuid, major: 1, minor: 2, make: "m"),
        ] {
            #expect(Self.checksum([changed, two]) != Self.checksum([one, two]), "\(changed)")
        }
        #expect(Self.checksum([one, two, two]) != Self.checksum([one, two]))
        var empty = one
        empty.model = ""
        #expect(Self.checksum([empty, two]) == Self.checksum([one, two]), "an absent field is an empty one")
        #expect(ListChecksum().description == String(repeating: "0", count: 32))
    }

    /// Changes that do not fit the list are refused, and a change altered on the way is caught by the checksum.
    @Test func changesThatDoNotFitAreRefusedAndAnAlteredOneIsCaught() throws {
        var random = SystemRandomNumberGenerator()
        let list = Self.list(fixed: 10, rotating: 10, using: &random)
        let next = Self.next(list, version: 1, using: &random)
        let changes = ListChanges.between(list, next, version: "\"m1\"")
        #expect(throws: ListChangesError.self) { try ListApplier(changes, rotatingIDs: ["bike_r0"]) }
        #expect(throws: ListChangesError.self) {
            try ListApplier(changes, rotatingIDs: list.filter(\.isRotating).map(\.id) + ["bike_r99"])
        }
        var cut = changes
        cut.moves.removeLast()
        #expect(throws: ListChangesError.self) {
            try ListApplier(cut, rotatingIDs: list.filter(\.isRotating).map(\.id))
        }
        // An identity gained altered: it applies, and the checksum says the list is not the registry's.
        var altered = changes
        altered.moves[altered.moves.count - 1] ^= 0x01
        let wrong = try Self.applied(altered, to: list)
        #expect(Self.checksum(wrong) != altered.checksum)
        #expect(Self.checksum(try Self.applied(changes, to: list)) == changes.checksum)
        // A move that drops an identity the bike does not hold.
        var foreign = list
        if let index = foreign.firstIndex(where: \.isRotating) { foreign[index].identities[0] ^= 0xFFFF }
        let held = try ListApplier(changes, rotatingIDs: foreign.filter(\.isRotating).map(\.id))
        #expect(throws: ListChangesError.self) { for entry in foreign { _ = try held.apply(entry) } }
    }
}
