import BeaconWire
import Testing

@testable import BeaconEngine

@Suite(.timeLimit(.minutes(20))) struct MissingBikeSetTests {
    static let other = BeaconUUID("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!

    static func set(_ entries: [BikeList.Entry], regions: [BeaconRegion] = [.findMyBike]) -> MissingBikeSet {
        MissingBikeSet(list: BikeList(entries: entries), regions: regions)
    }

    @Test func entriesWithoutUUIDOrMajorTakeTheFirstRegions() {
        let set = Self.set([.init(id: "a", minor: 5, missing: true)])
        #expect(set.contains(region: 0, major: 1, minor: 5))
        #expect(!set.contains(region: 0, major: 1, minor: 6))
        #expect(set.record(region: 0, major: 1, minor: 5)?.major == 1)
    }

    @Test func notMissingOutsideAndDuplicateEntriesAreCounted() {
        let set = Self.set([
            .init(id: "a", minor: 5, missing: true),
            .init(id: "b", minor: 5, missing: true),  // the same beacon again: the first entry wins
            .init(id: "c", minor: 6, missing: false),
            .init(id: "d", minor: 7, missing: true, major: 2),
            .init(id: "e", minor: 8, missing: true, uuid: Self.other.description),
            .init(id: "f", minor: 9, missing: true, uuid: "not-a-uuid"),
        ])
        #expect(set.count == 1)
        #expect(set.record(region: 0, major: 1, minor: 5)?.id == "a")
        #expect(set.statistics.duplicates == 1)
        #expect(set.statistics.notMissing == 1)
        #expect(set.statistics.outsideRegions == 2)
        #expect(set.statistics.rejected[.badUUID] == 1)
        #expect(!set.contains(region: 0, major: 1, minor: 6))
    }

    @Test func severalRegionsAndARegionWithoutMajor() {
        let regions = [BeaconRegion.findMyBike, BeaconRegion(uuid: Self.other)]
        let set = Self.set(
            [
                .init(id: "a", minor: 5, missing: true),
                .init(id: "b", minor: 5, missing: true, uuid: Self.other.description),  // any major
                .init(id: "c", minor: 6, missing: true, uuid: Self.other.description, major: 3),  // only major 3
                .init(id: "d", minor: 6, missing: true, uuid: Self.other.description, major: 4),
            ], regions: regions)
        #expect(set.count == 4)
        #expect(set.contains(region: 0, major: 1, minor: 5))
        #expect(set.contains(region: 1, major: 999, minor: 5))
        #expect(set.record(region: 1, major: 999, minor: 5)?.id == "b")
        #expect(set.contains(region: 1, major: 3, minor: 6) && set.contains(region: 1, major: 4, minor: 6))
        #expect(!set.contains(region: 1, major: 5, minor: 6), "minor 6 is missing only under majors 3 and 4")
        #expect(set.record(region: 1, major: 4, minor: 6)?.id == "d")
    }

    /// A list whose entries for any major repeat their minors past 65,536: the first of each is kept, the rest
    /// counted, and the builder holds only the kept ones on the way (the repeats and their text dropped as they come).
    @Test func minorsRepeatingPastTheirRangeAreDroppedAsTheyCome() {
        var builder = MissingBikeSet.Builder(regions: [BeaconRegion(uuid: BeaconRegion.findMyBike.uuid)])
        let entries = 70_000
        for index in 0..<entries {
            builder.add(BikeList.Entry(id: "b\(index)", minor: UInt16(index % 65_536), missing: true))
        }
        #expect(builder.placed.count == 65_536)
        let set = builder.build()
        #expect(set.count == 65_536)
        #expect(set.statistics.duplicates == entries - 65_536)
        #expect(set.statistics.entries == entries)
        #expect(set.record(region: 0, major: 7, minor: 5)?.id == "b5", "the first entry for minor 5 is kept")
        #expect(set.record(region: 0, major: 7, minor: 65_535)?.id == "b65535")
    }

    @Test func emptySet() {
        let set = MissingBikeSet(regions: [.findMyBike])
        #expect(set.count == 0)
        #expect(!(0...UInt16.max).contains { set.contains(region: 0, major: 1, minor: $0) })
    }
}
