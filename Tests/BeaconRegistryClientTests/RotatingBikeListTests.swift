import BeaconEngine
import BeaconRegistryClient
import BeaconTestSupport
import BeaconWire
import BikeListJSON
import Foundation
import Testing

/// A rotating beacon's bike in the registry's list (`beaconIdentities`, docs/registry-api.yaml) and in the cache.
@Suite(.timeLimit(.minutes(20))) struct RotatingBikeListTests {
    static let region = BeaconRegion(uuid: BeaconRegion.findMyBike.uuid)

    static func decode(_ json: String) throws -> BikeList { try BikeList(json: Array(json.utf8)) }

    @Test func identitiesAreReadAsPairsAndNameTheBike() throws {
        let list = try Self.decode(
            """
            [{"id":"r1","missing":true,"beaconUUID":"21eecf71-d5c7-4a00-9b90-27c94b5146ea",
              "beaconIdentities":[[41394,257], [ 3133 , 514 ],[65535,0],[7.0,1e1]],"make":"Honda"},
             {"id":"r2","missing":true,"beaconMinor":5,"beaconMajor":9,"beaconIdentities":[[1,2]]}]
            """)
        #expect(list.rejected.isEmpty)
        // Typed, and shifted one at a time: Swift 6.2's type checker (Debian's, the arm64 build's) gave up on the
        // literal whole.
        let pairs: [(UInt32, UInt32)] = [(41394, 257), (3133, 514), (65535, 0), (7, 10)]
        #expect(list.entries[0].identities == pairs.map { $0.0 << 16 | $0.1 })
        #expect(list.entries[0].isRotating && list.entries[0].make == "Honda")
        #expect(
            list.entries[1].identities == [1 << 16 | 2], "identities name the bike; its major and minor are not read")
        #expect(list.entries[1].major == nil)
    }

    @Test func identitiesOfTheWrongShapeRejectTheEntryAlone() throws {
        let list = try Self.decode(
            """
            [{"id":"ok","missing":true,"beaconIdentities":[[1,2]]},
             {"id":"empty","missing":true,"beaconIdentities":[]},
             {"id":"big","missing":true,"beaconIdentities":[[65536,0]]},
             {"id":"negative","missing":true,"beaconIdentities":[[1,-2]]},
             {"id":"fraction","missing":true,"beaconIdentities":[[1,2.5]]},
             {"id":"triple","missing":true,"beaconIdentities":[[1,2,3]]},
             {"id":"flat","missing":true,"beaconIdentities":[1,2]},
             {"id":"text","missing":true,"beaconIdentities":"0001:0002"},
             {"id":"null","missing":true,"beaconIdentities":null,"beaconMinor":4}]
            """)
        #expect(list.entries.map(\.id) == ["ok", "null"])
        #expect(list.rejected == [.badIdentities: 7])
        #expect(list.entries[1].minor == 4 && !list.entries[1].isRotating)
    }

    @Test func identitiesThatAreNotJSONFailTheList() {
        for text in [
            #"[{"id":"a","missing":true,"beaconIdentities":[[1,2]}]"#, #"[{"id":"a","beaconIdentities":[[01,2]]}]"#,
        ] {
            #expect(throws: BikeListError.self) { try Self.decode(text) }
        }
    }

    @Test func theCacheKeepsEachBikeWithItsIdentities() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let identities: [UInt32] = [0xA1B2_0101, 0x0C3D_0202, 0x4E5F_0303]
        let set = MissingBikeSet(
            list: BikeList(entries: [
                .init(id: "rotating", minor: 0, missing: true, make: "Triumph", identities: identities),
                .init(id: "fixed", minor: 7, missing: true, major: 1, colour: "red"),
            ]), regions: [Self.region])
        let cache = BikeCache(path: directory.file("missing-bikes.json"))
        try cache.store(.init(set: set, validators: CacheValidators(), fetchedAt: 1, source: "https://r/api"))
        let loaded = try #require(try cache.load(regions: [Self.region]))
        #expect(loaded.set.bikes == set.bikes)
        #expect(loaded.set.statistics.missing == 2 && loaded.set.statistics.identities == 3)
        #expect(loaded.set.record(region: 0, major: 0x0C3D, minor: 0x0202)?.isRotating == true)
        let text = try String(contentsOfFile: cache.path, encoding: .utf8)
        #expect(text.contains(#""beaconIdentities":[[41394,257],[3133,514],[20063,771]]"#))
        #expect(text.components(separatedBy: #""id":"rotating""#).count == 2, "the bike once")
    }
}
