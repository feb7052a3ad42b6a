import BeaconEngine
import BeaconRegistryClient
import BeaconWire
import BikeListJSON
import Testing

@Suite(.timeLimit(.minutes(20))) struct BikeListTests {
    static func decode(_ json: String) throws -> BikeList { try BikeList(json: Array(json.utf8)) }

    @Test func decodesTheRegistryFormatAndIgnoresUnknownFields() throws {
        let list = try Self.decode(
            """
            [{"id":"b1","beaconMinor":7,"missing":true,"make":"Honda","model":"CB500","colour":"red",
              "beaconUUID":"21eecf71-d5c7-4a00-9b90-27c94b5146ea","beaconMajor":1,"photos":[1,2],"nested":{"a":null}},
             {"id":"b2","beaconMinor":65535,"missing":false}]
            """)
        #expect(list.rejected.isEmpty)
        #expect(list.entries.count == 2)
        let first = list.entries[0]
        #expect(first.id == "b1" && first.minor == 7 && first.missing && first.major == 1)
        #expect(first.make == "Honda" && first.model == "CB500" && first.colour == "red")
        #expect(list.entries[1].minor == 65_535 && !list.entries[1].missing)
    }

    @Test func ownerDataIsNeverDecoded() throws {
        let list = try Self.decode(
            #"[{"id":"b1","beaconMinor":7,"missing":true,"deviceToken":"fcm:SECRET","ownerEmail":"rider@example.com"}]"#
        )
        let set = MissingBikeSet(list: list, regions: [.findMyBike])
        // Nothing reachable from what beacond keeps holds the owner's data.
        for value in [String(reflecting: list), String(reflecting: set.bikes), String(reflecting: set.statistics)] {
            #expect(!value.contains("SECRET") && !value.contains("rider@"))
        }
    }

    @Test func invalidEntriesAreSkippedAndCountedByReason() throws {
        let list = try Self.decode(
            """
            [{"id":"ok","beaconMinor":1,"missing":true},
             "a string", 42, null, [],
             {"beaconMinor":2,"missing":true}, {"id":"","beaconMinor":2,"missing":true}, {"id":7,"beaconMinor":2,"missing":true},
             {"id":"m1","missing":true}, {"id":"m2","beaconMinor":65536,"missing":true}, {"id":"m3","beaconMinor":-1,"missing":true},
             {"id":"m4","beaconMinor":"5","missing":true}, {"id":"m5","beaconMinor":1.5,"missing":true},
             {"id":"x1","beaconMinor":3}, {"id":"x2","beaconMinor":3,"missing":"yes"},
             {"id":"j1","beaconMinor":3,"missing":true,"beaconMajor":70000},
             {"id":"u1","beaconMinor":3,"missing":true,"beaconUUID":17},
             {"id":"d1","beaconMinor":3,"missing":true,"make":17}]
            """)
        #expect(
            list.entries.map(\.id) == ["ok", "d1"],
            "a descriptive field of the wrong type loses the field, not the bike")
        #expect(list.entries[1].make == nil)
        #expect(list.rejected[.notAnObject] == 4)
        #expect(list.rejected[.badID] == 3)
        #expect(list.rejected[.badMinor] == 5)
        #expect(list.rejected[.badMissing] == 2)
        #expect(list.rejected[.badMajor] == 1)
        #expect(list.rejected[.badUUID] == 1)
    }

    @Test(arguments: [
        ("{\"bikes\":[]}", BikeListError.Code.notAnArray), ("\"text\"", .notAnArray), ("17", .notAnArray),
        ("null", .notAnArray), ("", .notJSON), ("[", .notJSON), ("[{\"id\":", .notJSON), ("<html>502</html>", .notJSON),
    ])
    func answersThatAreNotAJSONArrayAreErrors(text: String, code: BikeListError.Code) {
        #expect(throws: BikeListError(code)) { try Self.decode(text) }
    }

    @Test func anEmptyArrayIsAValidEmptyList() throws {
        #expect(try Self.decode("[]").entries.isEmpty)
    }

    @Test func sixtyFiveThousandBikesDecode() throws {
        let json =
            "["
            + (0...65_535).map { #"{"id":"bike-\#($0)","beaconMinor":\#($0),"missing":true,"deviceToken":"t"}"# }
            .joined(separator: ",") + "]"
        let list = try Self.decode(json)
        #expect(list.entries.count == 65_536)
        let set = MissingBikeSet(list: list, regions: [.findMyBike])
        #expect(set.count == 65_536)
        #expect((0...UInt16.max).allSatisfy { set.contains(region: 0, major: 1, minor: $0) })
    }
}
