import BeaconEngine
import BeaconTestSupport
import BeaconWire
import Testing

/// A rotating beacon's bike in the missing set: each identity matched like a fixed beacon, under the one bike.
@Suite(.timeLimit(.minutes(20))) struct RotatingBikeSetTests {
    static let anyMajor = BeaconRegion(uuid: BeaconRegion.findMyBike.uuid)

    static func identity(_ major: UInt16, _ minor: UInt16) -> UInt32 { UInt32(major) << 16 | UInt32(minor) }

    static func set(_ entries: [BikeList.Entry], regions: [BeaconRegion] = [anyMajor]) -> MissingBikeSet {
        MissingBikeSet(list: BikeList(entries: entries), regions: regions)
    }

    @Test func everyIdentityNamesTheBikeAndTheBikeCountsOnce() {
        let identities = [Self.identity(0x1234, 0x5678), Self.identity(7, 9), Self.identity(0xFFFF, 0)]
        let set = Self.set([
            .init(id: "rotating", minor: 0, missing: true, make: "Honda", identities: identities),
            .init(id: "fixed", minor: 9, missing: true, major: 1),
        ])
        for identity in identities {
            let (major, minor) = (UInt16(identity >> 16), UInt16(identity & 0xFFFF))
            #expect(set.contains(region: 0, major: major, minor: minor))
            let record = set.record(region: 0, major: major, minor: minor)
            #expect(record?.id == "rotating" && record?.isRotating == true && record?.make == "Honda")
        }
        #expect(set.record(region: 0, major: 1, minor: 9)?.isRotating == false)
        #expect(!set.contains(region: 0, major: 0x1234, minor: 9), "a minor of the bike's under another major")
        #expect(!set.contains(region: 0, major: 8, minor: 9))
        #expect(set.statistics.missing == 2)
        #expect(set.statistics.identities == 3)
        #expect(set.count == 2, "the bikes, not their identities")
        #expect(set.bikes.count == 4, "a record per identity, and the fixed beacon's")
    }

    @Test func aRegionNamingAMajorTakesOnlyTheIdentitiesUnderIt() {
        let set = Self.set(
            [
                .init(id: "some", minor: 0, missing: true, identities: [Self.identity(1, 5), Self.identity(2, 6)]),
                .init(id: "none", minor: 0, missing: true, identities: [Self.identity(3, 7)]),
            ], regions: [.findMyBike])
        #expect(set.contains(region: 0, major: 1, minor: 5))
        #expect(!set.contains(region: 0, major: 1, minor: 6))
        #expect(set.statistics.missing == 1 && set.statistics.identities == 1)
        #expect(set.statistics.outsideRegions == 1, "a bike none of whose identities any region admits")
    }

    @Test func anIdentityAnotherEntryHoldsIsTheFirstEntrys() {
        let set = Self.set([
            .init(id: "fixed", minor: 6, missing: true, major: 2),
            .init(id: "clone", minor: 0, missing: true, identities: [Self.identity(2, 6), Self.identity(3, 3)]),
        ])
        #expect(set.record(region: 0, major: 2, minor: 6)?.id == "fixed")
        #expect(set.record(region: 0, major: 3, minor: 3)?.id == "clone")
        #expect(set.statistics.sharedIdentities == 1 && set.statistics.duplicates == 0)
        #expect(set.statistics.missing == 2)
    }

    @Test func eachBikeIsGivenOnceWithItsIdentities() {
        let first = [Self.identity(9, 1), Self.identity(1, 2), Self.identity(5, 0)]
        let second = [Self.identity(4, 4)]
        let set = Self.set([
            .init(id: "one", minor: 0, missing: true, identities: first),
            .init(id: "fixed", minor: 3, missing: true, major: 7),
            .init(id: "two", minor: 0, missing: true, identities: second),
        ])
        var seen: [String: [UInt32]] = [:]
        set.forEachBike { region, bike, identities in
            #expect(region == Self.anyMajor)
            #expect(seen[bike.id] == nil)
            seen[bike.id] = identities
        }
        #expect(seen["fixed"] == [])
        #expect(Set(seen["one"] ?? []) == Set(first) && seen["one"]?.count == 3)
        #expect(seen["two"] == second)
    }

    /// The per-advert test against a set made of every identity, on 170,000 identities (10,000 bikes, ±2 h at
    /// 15 minutes): a hash index there, where a bitmap by minor is nine tenths full.
    @Test func manyIdentitiesAreFoundAndNothingElseIs() {
        var generator = SeededRandom(state: 41)
        var all = Set<UInt32>()
        var entries: [BikeList.Entry] = []
        for bike in 0..<10_000 {
            let identities = (0..<17).map { _ in UInt32(truncatingIfNeeded: generator.next()) }
            all.formUnion(identities)
            entries.append(.init(id: "bike-\(bike)", minor: 0, missing: true, identities: identities))
        }
        let set = Self.set(entries)
        #expect(set.statistics.identities + set.statistics.sharedIdentities == 170_000)
        #expect(set.statistics.identities == all.count)
        for identity in all.prefix(20_000) {
            #expect(set.contains(region: 0, major: UInt16(identity >> 16), minor: UInt16(identity & 0xFFFF)))
        }
        var falsePositives = 0
        for _ in 0..<200_000 {
            let probe = UInt32(truncatingIfNeeded: generator.next())
            let found = set.contains(region: 0, major: UInt16(probe >> 16), minor: UInt16(probe & 0xFFFF))
            if found != all.contains(probe) { falsePositives += 1 }
        }
        #expect(falsePositives == 0)
    }
}
