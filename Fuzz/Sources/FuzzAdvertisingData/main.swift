import BeaconWire
import FuzzDriver

/// Any bytes as the advertising data of one report: the AD walk that reads raw memory.
func fuzzAdvertisingData(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = input(data, size)
    let summary = AdvertisingData.summarize(UnsafeRawBufferPointer(bytes))
    precondition((summary.beacon != nil) == (summary.kind == .iBeacon))
    return 0
}

runFuzzer(fuzzAdvertisingData)
