import TextFormats

/// JSON written by hand for the shapes written on every request (a message to an owner, a sighting's receipt):
/// JSONEncoder took a tenth of the registry's time per sighting. Strings escaped as RFC 8259 asks (`JSONString`); keys in the order given (sorted, as JSONEncoder's
/// `.sortedKeys` writes them, so a message reads the same whichever wrote it).
public struct JSONWriter {
    private(set) var bytes: [UInt8] = []

    public init() { bytes.reserveCapacity(256) }

    public var text: String { String(decoding: bytes, as: UTF8.self) }

    public mutating func raw(_ text: String) { bytes.append(contentsOf: text.utf8) }

    public mutating func string(_ value: String) { JSONString.append(value, to: &bytes) }

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
