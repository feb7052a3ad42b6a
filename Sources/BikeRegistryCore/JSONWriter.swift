/// JSON written by hand for the shapes written on every request (a message to an owner, a sighting's receipt):
/// JSONEncoder took a tenth of the registry's time per sighting. Strings escaped as RFC 8259 asks (quote, backslash
/// and control characters), the rest of UTF-8 as it is; keys in the order given (sorted, as JSONEncoder's
/// `.sortedKeys` writes them, so a message reads the same whichever wrote it).
public struct JSONWriter {
    private(set) var bytes: [UInt8] = []

    public init() { bytes.reserveCapacity(256) }

    public var text: String { String(decoding: bytes, as: UTF8.self) }

    public mutating func raw(_ text: String) { bytes.append(contentsOf: text.utf8) }

    public mutating func string(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): bytes.append(contentsOf: #"\\"#.utf8)
            case 0x0A: bytes.append(contentsOf: #"\n"#.utf8)
            case 0x0D: bytes.append(contentsOf: #"\r"#.utf8)
            case 0x09: bytes.append(contentsOf: #"\t"#.utf8)
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: #"\u00"#.utf8)
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 0x0F)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// A number as JSONEncoder writes it: a whole one without a fraction, others in Swift's shortest exact form.
    public mutating func number(_ value: Double) {
        if value.isFinite, value == value.rounded(), abs(value) < 1e15 {
            raw(String(Int64(value)))
        } else {
            raw(value.isFinite ? "\(value)" : "null")
        }
    }

    /// `"key":` after a comma unless it is the object's first.
    public mutating func key(_ key: String, first: Bool = false) {
        if !first { bytes.append(UInt8(ascii: ",")) }
        string(key)
        bytes.append(UInt8(ascii: ":"))
    }
}
