// The missing-bike list, from the registry's JSON to the set matching needs: beacond's streaming reader and
// compact builder (BikeListReader + MissingBikeSet.Builder, fed 64 KiB at a time, as the answer arrives) against
// what it replaced in the same run: Foundation's JSONDecoder on the whole document, then the set from the decoded
// list. Fails when the two disagree on the set.
//
//   BikeListBenchmark [--bikes N] [--iterations K]
import BeaconEngine
import BikeListJSON
import BeaconWire
import Foundation

var bikes = 137_050
var iterations = 3
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--bikes": bikes = Int(arguments.popFirst() ?? "") ?? bikes
    case "--iterations": iterations = Int(arguments.popFirst() ?? "") ?? iterations
    default:
        FileHandle.standardError.write(Data("usage: BikeListBenchmark [--bikes N] [--iterations K]\n".utf8))
        exit(64)
    }
}

// The same entries scripts/bench-daemon --big-list serves: 137,050 of them make its 16 MiB.
let makes = [("Honda", "CB500F", "red"), ("Yamaha", "MT-07", "blue"), ("Triumph", "Street Triple", "black"),
             ("BMW", "R 1250 GS", "white"), ("Kawasaki", "Z900", "green")]
var text = "["
for index in 0..<bikes {
    let (make, model, colour) = makes[index % makes.count]
    if index > 0 { text += "," }
    text += #"{"id":"bike-\#(String(format: "%06d", index))","beaconMajor":\#(index / 65_536 + 1),"beaconMinor":\#(index % 65_536),"#
        + #""missing":true,"make":"\#(make)","model":"\#(model)","colour":"\#(colour)"}"#
}
text += "]"
let json = Array(text.utf8)
let regions = [BeaconRegion("21EECF71-D5C7-4A00-9B90-27C94B5146EA")!]

/// What the daemon did before: the whole document decoded at once, then the set made from the list.
struct Bike: Decodable {
    var id: String
    var beaconMinor: UInt16
    var missing: Bool
    var beaconUUID: String?
    var beaconMajor: UInt16?
    var make: String?
    var model: String?
    var colour: String?
}

func wholeDocument() -> MissingBikeSet {
    let decoded = try! JSONDecoder().decode([Bike].self, from: Data(json))
    let entries = decoded.map {
        BikeList.Entry(id: $0.id, minor: $0.beaconMinor, missing: $0.missing, uuid: $0.beaconUUID, major: $0.beaconMajor,
                       make: $0.make, model: $0.model, colour: $0.colour)
    }
    return MissingBikeSet(list: BikeList(entries: entries), regions: regions)
}

func streamed() -> MissingBikeSet {
    var reader = BikeListReader(shape: .answer)
    var builder = MissingBikeSet.Builder(regions: regions)
    var offset = 0
    while offset < json.count {
        let end = min(offset + 65_536, json.count)
        try! reader.feed(json[offset..<end]) { builder.add($0) }
        offset = end
    }
    try! reader.finish { builder.add($0) }
    return builder.build()
}

func seconds(_ body: () -> MissingBikeSet) -> (Double, MissingBikeSet) {
    let start = DispatchTime.now().uptimeNanoseconds
    let set = body()
    return (Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9, set)
}

var best = (whole: Double.infinity, streamed: Double.infinity)
for _ in 0..<iterations {
    let (whole, reference) = seconds(wholeDocument)
    let (stream, set) = seconds(streamed)
    guard set.count == reference.count, set.count == bikes, set.bikes == reference.bikes else {
        FileHandle.standardError.write(Data("BikeListBenchmark: the streamed set differs from the decoded one\n".utf8))
        exit(1)
    }
    best = (min(best.whole, whole), min(best.streamed, stream))
}
print(String(format: "bike list, %d bikes (%.1f MiB of JSON), best of %d:", bikes, Double(json.count) / 1_048_576, iterations))
print(String(format: "  JSONDecoder on the whole document, then the set   %8.1f ms  %6.2f µs/bike  1.00x", best.whole * 1e3, best.whole / Double(bikes) * 1e6))
print(String(format: "  BikeListReader + Builder, 64 KiB at a time         %8.1f ms  %6.2f µs/bike  %.2fx", best.streamed * 1e3,
             best.streamed / Double(bikes) * 1e6, best.streamed / best.whole))
