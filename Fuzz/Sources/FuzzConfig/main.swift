import FuzzDriver
import StationSettings
import TextFormats

/// Any bytes as /etc/beacond/beacond.conf, parsed and applied as `beacond run` and `check-config` do.
func fuzzConfig(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = input(data, size)
    let text = String(decoding: bytes, as: UTF8.self)
    let file = ConfigFile(text: text)
    _ = DaemonConfiguration.load(file: file.entries, flags: [])
    return 0
}

runFuzzer(fuzzConfig)
