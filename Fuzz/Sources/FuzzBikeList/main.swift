import BeaconEngine
import BeaconWire
import BikeListJSON
import FuzzDriver

/// FindMyBike's UUID with no major (where rotating beacons' identities match), and with its major.
let regions = [BeaconRegion(uuid: BeaconRegion.findMyBike.uuid), .findMyBike]

/// Any bytes as the registry's answer to GET /bikes (and the cached copy of it), then the set made from whatever it
/// held: every record looked up again, and every bike given once for the cache.
func fuzzBikeList(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = input(data, size)
    guard let list = try? BikeList(json: bytes) else { return 0 }
    let set = MissingBikeSet(list: list, regions: regions)
    var given = 0
    set.forEachBike { region, bike, identities in
        let index = regions.firstIndex(of: region)!
        if identities.isEmpty {
            given += 1
            precondition(
                set.record(region: index, major: bike.major ?? 1, minor: bike.minor) != nil, "a bike not found")
        }
        for identity in identities {
            given += 1
            let found = set.record(region: index, major: UInt16(identity >> 16), minor: UInt16(identity & 0xFFFF))
            precondition(found?.id == bike.id && found?.isRotating == true, "an identity not found as its bike's")
        }
    }
    precondition(given == set.bikes.count, "forEachBike gave \(given) records of \(set.bikes.count)")
    return 0
}

runFuzzer(fuzzBikeList)
