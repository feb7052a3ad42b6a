/// A checksum of the whole list, which a station checks after applying changes: the sum of each entry's own hash,
/// so it needs no order (a station's set keeps none) and grows an entry at a time as either program reads or writes
/// the list. Each entry is hashed over its canonical bytes (`canonicalBytes`) on two lanes of FNV-1a 64, each mixed
/// (splitmix64's finalizer) before it is added: 128 bits, against an applying station's mistakes rather than an
/// attacker (the list comes over TLS from the registry).
public struct ListChecksum: Sendable, Equatable, CustomStringConvertible {
    public private(set) var low: UInt64 = 0
    public private(set) var high: UInt64 = 0
    public private(set) var count = 0

    public init() {}

    public mutating func add(_ entry: ListedEntry) {
        var first: UInt64 = 0xcbf2_9ce4_8422_2325
        var second: UInt64 = 0x84222325_cbf29ce4
        for byte in Self.canonicalBytes(entry) {
            first = (first ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
            second = (second ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        low = low &+ Self.mix(first)
        high = high &+ Self.mix(second ^ 0x9e37_79b9_7f4a_7c15)
        count += 1
    }

    /// 32 hexadecimal digits, as the changes carry it.
    public var description: String { Self.hex(high) + Self.hex(low) }

    /// An entry's fields, each followed by 0x1F: id, the UUID in upper case (empty when absent), then `F`, major (empty when absent) and
    /// minor for a fixed beacon or `R` and the identities as eight hexadecimal digits each, in increasing order,
    /// comma-separated, for a rotating one; then make, model and colour (empty when absent).
    static func canonicalBytes(_ entry: ListedEntry) -> [UInt8] {
        var bytes: [UInt8] = []
        func field(_ text: String) {
            bytes += Array(text.utf8)
            bytes.append(0x1F)
        }
        field(entry.id)
        field(entry.uuid?.uppercased() ?? "")
        if entry.isRotating {
            field("R")
            field(entry.identities.sorted().map(hex).joined(separator: ","))
        } else {
            field("F")
            field(entry.major.map { String($0) } ?? "")
            field(String(entry.minor))
        }
        for text in [entry.make, entry.model, entry.colour] { field(text ?? "") }
        return bytes
    }

    private static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }

    private static func hex(_ value: UInt64) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: 16 - text.count) + text
    }

    private static func hex(_ value: UInt32) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: 8 - text.count) + text
    }
}
