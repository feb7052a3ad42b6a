/// One iBeacon advertisement as `beacond replay` prints it.
public struct AdvertLine: Sendable {
    public var frame: Int
    public var advert: Advert
    public var beacon: IBeacon

    public init?(frame: Int, advert: Advert) {
        guard let beacon = advert.beacon else { return nil }
        self.frame = frame
        self.advert = advert
        self.beacon = beacon
    }

    /// `--format jsonl`: exactly the keys frame, time, adapter, addr, addrType, uuid, major, minor, power,
    /// rssi. Every value is a number, null or a string of hex digits and punctuation, so nothing needs escaping.
    public var json: String {
        var text: [UInt8] = []
        appendJSON(to: &text)
        return String(decoding: text, as: UTF8.self)
    }

    /// The JSON line, written straight into the output bytes (a replay writes one per iBeacon).
    public func appendJSON(to text: inout [UInt8]) {
        text.appendASCII("{\"frame\":")
        text.appendDecimal(Int64(frame))
        text.appendASCII(",\"time\":")
        if let time = advert.time {
            text.append(UInt8(ascii: "\""))
            time.appendISO8601(to: &text)
            text.append(UInt8(ascii: "\""))
        } else {
            text.appendASCII("null")
        }
        text.appendASCII(",\"adapter\":")
        if let adapter = advert.adapter { text.appendDecimal(Int64(adapter)) } else { text.appendASCII("null") }
        text.appendASCII(",\"addr\":\"")
        advert.address.append(to: &text)
        text.appendASCII(advert.addressType == .public ? "\",\"addrType\":\"public\"" : "\",\"addrType\":\"random\"")
        text.appendASCII(",\"uuid\":\"")
        beacon.uuid.append(to: &text)
        text.appendASCII("\",\"major\":")
        text.appendDecimal(Int64(beacon.major))
        text.appendASCII(",\"minor\":")
        text.appendDecimal(Int64(beacon.minor))
        text.appendASCII(",\"power\":")
        text.appendDecimal(Int64(beacon.measuredPower))
        text.appendASCII(",\"rssi\":")
        if let rssi = advert.rssi { text.appendDecimal(Int64(rssi)) } else { text.appendASCII("null") }
        text.appendASCII("}\n")
    }
}
