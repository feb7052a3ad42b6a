import BeaconControl
import Foundation
import FuzzDriver

/// Any bytes as a control-socket request line (what the daemon reads, at most `maximumBytes` of it) and as a
/// response (what `beacond status` reads from the socket).
func fuzzControlRequest(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = input(data, size)
    _ = try? JSONDecoder().decode(ControlRequest.self, from: Data(bytes.prefix(ControlRequest.maximumBytes)))
    _ = try? JSONDecoder().decode(ControlResponse.self, from: Data(bytes))
    return 0
}

runFuzzer(fuzzControlRequest)
