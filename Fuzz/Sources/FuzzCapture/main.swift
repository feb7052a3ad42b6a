import BeaconWire
import FuzzDriver

/// Any bytes as a capture file of any format (the format is detected from them), read in 7-byte pieces so the
/// stream's refill and carry-over paths run too, through the whole decoder.
func fuzzCapture(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = input(data, size)
    let array = Array(bytes)
    for chunk in [Int.max, 7] {
        guard let stream = try? CaptureStream(source: MemoryByteSource(array, chunk: chunk), capacity: 600) else { continue }
        var decoder = AdvertDecoder()
        var beacons = 0
        try? stream.forEachRecord { record, _ in
            decoder.decode(record) { advert in if advert.beacon != nil { beacons += 1 } }
        }
        precondition(decoder.counters.advertisingReports >= UInt64(beacons))
    }
    return 0
}

runFuzzer(fuzzCapture)
