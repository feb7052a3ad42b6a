import BeaconWire
import FuzzDriver

/// Any bytes as an HCI event (starting at the event code), as a live socket hands them over.
func fuzzHCIEvent(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = input(data, size)
    let event = UnsafeRawBufferPointer(bytes)
    var counters = DecodeCounters()
    _ = LEMetaEvent.carriesAdvertisingReports(event)
    LEMetaEvent.forEachReport(inEvent: event, counters: &counters) { report, _ in
        precondition(report.data.count <= size)
        _ = AdvertisingData.summarize(report.data)
    }
    return 0
}

runFuzzer(fuzzHCIEvent)
