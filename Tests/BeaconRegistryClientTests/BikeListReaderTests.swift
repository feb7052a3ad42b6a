import BeaconEngine
import BeaconRegistryClient
import BeaconWire
import BikeListJSON
import Testing

/// The reader that takes the bike list as it arrives: the same result however the bytes are cut, the cache's
/// shape, and everything that must fail the whole list.
@Suite(.timeLimit(.minutes(20))) struct BikeListReaderTests {
    static let answer = #"""
        [ {"id":"b1","beaconMinor":7,"missing":true,"make":"Ducati \"Monster\"","note":"a [tricky], {string}","nested":{"a":[1,{"b":"]"}]}},
          {"id":"b\u00e9\ud83d\udeb2","beaconMinor":8.0,"missing":true,"beaconMajor":2e0,"colour":"gr\\een"},
          {"id":"b3","beaconMinor":9,"missing":false}, "not a bike", {"id":"b4","beaconMinor":1.5,"missing":true} ]
        """#

    static func read(_ text: String, shape: BikeListReader.Shape = .answer, cuts: [Int] = []) throws -> (
        [BikeListReader.Item], BikeListError?
    ) {
        let bytes = Array(text.utf8)
        var reader = BikeListReader(shape: shape)
        var items: [BikeListReader.Item] = []
        var start = 0
        do {
            for cut in cuts + [bytes.count] where cut >= start {
                try reader.feed(bytes[start..<cut]) { items.append($0) }
                start = cut
            }
            try reader.finish { items.append($0) }
        } catch {
            return (items, error)
        }
        return (items, nil)
    }

    static func summary(_ items: [BikeListReader.Item]) -> [String] {
        items.map { item in
            switch item {
            case .entry(let entry):
                "\(entry.id) \(entry.minor) \(entry.missing) \(entry.major.map(String.init) ?? "-") \(entry.make ?? "-") \(entry.colour ?? "-")"
            case .rejected(let reason): "rejected: \(reason.rawValue)"
            case .field(let key, let value): "\(key)=\(String(decoding: value, as: UTF8.self))"
            }
        }
    }

    @Test func theSameItemsWhereverTheBytesAreCut() throws {
        let (whole, error) = try Self.read(Self.answer)
        #expect(error == nil)
        #expect(
            Self.summary(whole) == [
                #"b1 7 true - Ducati "Monster" -"#, "bé🚲 8 true 2 - gr\\een", "b3 9 false - - -",
                "rejected: not an object",
                "rejected: beaconMinor missing or not an integer 0-65535",
            ])
        // Every single cut, and cuts every 3 bytes.
        for cut in 1..<Array(Self.answer.utf8).count {
            let (items, error) = try Self.read(Self.answer, cuts: [cut])
            #expect(error == nil && Self.summary(items) == Self.summary(whole), "cut at \(cut)")
        }
        let (small, _) = try Self.read(
            Self.answer, cuts: Array(stride(from: 3, to: Array(Self.answer.utf8).count, by: 3)))
        #expect(Self.summary(small) == Self.summary(whole))
    }

    @Test func theCacheShapeGivesItsFieldsAndItsBikes() throws {
        let cache =
            #"{"version":1,"fetchedAt":1700000000000,"source":"https://r/api","validators":{"etag":"\"v2\""},"bikes":[{"id":"b1","beaconMinor":7,"missing":true}],"later":null}"#
        let (items, error) = try Self.read(cache, shape: .cache, cuts: [17, 60, 120])
        #expect(error == nil)
        #expect(
            Self.summary(items) == [
                "version=1", "fetchedAt=1700000000000", #"source="https://r/api""#, #"validators={"etag":"\"v2\""}"#,
                "b1 7 true - - -", "later=null",
            ])
        #expect(
            try Self.read(#"{"version":1}"#, shape: .cache).1 == BikeListError(.notAnArray), "a cache without bikes")
        #expect(try Self.read("[]", shape: .cache).1 == BikeListError(.notAnArray))
    }

    @Test(arguments: [
        ("[1,]", BikeListError.Code.notJSON), ("[,1]", .notJSON), ("[1,,2]", .notJSON), ("[{} {}]", .notJSON),
        ("[] x", .notJSON),
        (#"[{"id":"a"}"#, .notJSON), (#"[{"id":"a\q"}]"#, .notJSON), ("[tru]", .notJSON), ("[01]", .notJSON),
        (#"{"bikes":[]}"#, .notAnArray), ("  17  ", .notAnArray), ("null", .notAnArray), ("\"[\"", .notAnArray),
        ("{", .notJSON),
    ])
    func wholeListFailures(text: String, code: BikeListError.Code) throws {
        #expect(try Self.read(text).1 == BikeListError(code), "\(text)")
    }

    @Test func anElementPastTheLimitIsSkippedNotHeld() throws {
        let huge =
            #"{"id":"big","beaconMinor":1,"missing":true,"padding":""#
            + String(repeating: "x", count: BikeListReader.elementLimit) + #""}"#
        let (items, error) = try Self.read(
            "[\(huge),{\"id\":\"ok\",\"beaconMinor\":2,\"missing\":true}]", cuts: [1_000, 40_000])
        #expect(error == nil)
        #expect(Self.summary(items) == ["rejected: entry larger than 64 KiB", "ok 2 true - - -"])
    }
}
