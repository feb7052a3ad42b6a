/// A D-Bus value with its type, as it goes into or comes out of a message. Arrays carry their element
/// signature so an empty one can still be written.
public indirect enum DBusValue: Equatable, Sendable {
    case byte(UInt8)
    case bool(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    case signature(String)
    case array(element: String, [DBusValue])
    case dictEntry(DBusValue, DBusValue)
    case structure([DBusValue])
    case variant(DBusValue)

    /// The value's type signature.
    public var signature: String {
        switch self {
        case .byte: "y"
        case .bool: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .array(let element, _): "a" + element
        case .dictEntry(let key, let value): "{" + key.signature + value.signature + "}"
        case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
        case .variant: "v"
        }
    }

    // Convenience for the shapes BlueZ uses.

    /// `a{sv}` from pairs.
    public static func properties(_ pairs: [(String, DBusValue)]) -> DBusValue {
        .array(element: "{sv}", pairs.map { .dictEntry(.string($0.0), .variant($0.1)) })
    }

    /// `ay`.
    public static func bytes(_ bytes: [UInt8]) -> DBusValue { .array(element: "y", bytes.map(DBusValue.byte)) }

    public var string: String? {
        switch self {
        case .string(let value), .objectPath(let value), .signature(let value): value
        case .variant(let inner): inner.string
        default: nil
        }
    }

    public var int: Int? {
        switch self {
        case .byte(let v): Int(v)
        case .int16(let v): Int(v)
        case .uint16(let v): Int(v)
        case .int32(let v): Int(v)
        case .uint32(let v): Int(v)
        case .int64(let v): Int(v)
        case .uint64(let v): Int(exactly: v)
        case .variant(let inner): inner.int
        default: nil
        }
    }

    /// A `t` (uint64) whole, such as systemd's capability masks, which may not fit an Int.
    public var uint64: UInt64? {
        switch self {
        case .uint64(let v): v
        case .variant(let inner): inner.uint64
        default: int.flatMap { UInt64(exactly: $0) }
        }
    }

    public var bool: Bool? {
        switch self {
        case .bool(let v): v
        case .variant(let inner): inner.bool
        default: nil
        }
    }

    /// The bytes of an `ay` (through a variant).
    public var byteArray: [UInt8]? {
        switch self {
        case .array("y", let items): items.compactMap { if case .byte(let b) = $0 { b } else { nil } }
        case .variant(let inner): inner.byteArray
        default: nil
        }
    }

    /// The entries of a dict (`a{..}`), through a variant.
    public var entries: [(key: DBusValue, value: DBusValue)]? {
        switch self {
        case .array(_, let items):
            items.compactMap { if case .dictEntry(let k, let v) = $0 { (k, v) } else { nil } }
        case .variant(let inner): inner.entries
        default: nil
        }
    }

    /// A string-keyed dict's value for `key`.
    public subscript(key: String) -> DBusValue? {
        entries?.first { $0.key.string == key }?.value
    }
}
