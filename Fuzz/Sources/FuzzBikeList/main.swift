import BeaconEngine
import BeaconRegistryClient
import FuzzDriver

/// Any bytes as the registry's answer to GET /bikes (and the cached copy of it).
func fuzzBikeList(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = input(data, size)
    _ = try? BikeList(json: bytes)
    return 0
}

runFuzzer(fuzzBikeList)
