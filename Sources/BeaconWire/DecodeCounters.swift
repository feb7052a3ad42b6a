/// Why a piece of input was dropped. Each reason is counted, never fatal.
public enum DropReason: Int, CaseIterable, Sendable {
    /// The capture ends in the middle of a record.
    case truncatedRecord
    /// A record or block header that cannot be right (length over the limit, not a multiple of 4, …);
    /// nothing after it in that file can be trusted, so reading stops there.
    case corruptRecord
    /// A link type (pcap/pcapng) or datalink (btsnoop) that is not Bluetooth HCI.
    case unknownLinkType
    /// A packet for a pcapng interface that was never described.
    case unknownInterface
    /// A line of a hex capture that is neither a packet, a comment nor a known header.
    case badHexLine
    /// An empty packet or an H4 packet-type byte that is not 1–5.
    case badPacketType
    /// An HCI event shorter than its header or its parameter length.
    case truncatedEvent
    /// An advertising report running past the end of its event; the event's later reports go with it.
    case reportPastEvent
    /// A legacy advertising report with more than 31 bytes of data (the kernel drops these too).
    case badReportLength
    /// An AD structure running past the end of the advertising data.
    case badADStructure
    /// Apple manufacturer data with the iBeacon prefix but not exactly 21 bytes after it.
    case malformedIBeacon

    public var label: String {
        switch self {
        case .truncatedRecord: "truncated record at end of file"
        case .corruptRecord: "corrupt record header (rest of file unreadable)"
        case .unknownLinkType: "unknown link type"
        case .unknownInterface: "packet for an undeclared interface"
        case .badHexLine: "unreadable hex line"
        case .badPacketType: "bad HCI packet type"
        case .truncatedEvent: "truncated HCI event"
        case .reportPastEvent: "advertising report past end of event"
        case .badReportLength: "advertising data over 31 bytes"
        case .badADStructure: "AD structure past end of data"
        case .malformedIBeacon: "iBeacon prefix with wrong length"
        }
    }
}

/// What a decode saw and what it dropped, for the summary at the end of a replay and for `status`.
public struct DecodeCounters: Equatable, Sendable {
    public var records: UInt64 = 0
    public var hciEvents: UInt64 = 0
    /// Packets that are valid but not for us: commands, ACL/SCO/ISO data, outgoing packets,
    /// other events and monitor notes.
    public var skipped: UInt64 = 0
    public var advertisingReports: UInt64 = 0
    public var byKind = KindCounts()
    public var drops = DropCounts()

    public init() {}

    @inlinable public mutating func drop(_ reason: DropReason) { drops.increment(reason) }
    @inlinable public mutating func count(_ kind: AdvertKind) { byKind.increment(kind) }

    public var totalDrops: UInt64 { DropReason.allCases.reduce(0) { $0 + drops[$1] } }

    public mutating func add(_ other: DecodeCounters) {
        records += other.records
        hciEvents += other.hciEvents
        skipped += other.skipped
        advertisingReports += other.advertisingReports
        for kind in AdvertKind.allCases { byKind[kind] += other.byKind[kind] }
        for reason in DropReason.allCases { drops[reason] += other.drops[reason] }
    }
}

/// One counter per `DropReason`, stored inline so that counting never allocates.
public struct DropCounts: Equatable, Sendable {
    @usableFromInline var storage:
        (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)

    @inlinable public init() {}

    @inlinable
    public subscript(reason: DropReason) -> UInt64 {
        get { withUnsafeBytes(of: storage) { $0.load(fromByteOffset: reason.rawValue * 8, as: UInt64.self) } }
        set {
            withUnsafeMutableBytes(of: &storage) {
                $0.storeBytes(of: newValue, toByteOffset: reason.rawValue * 8, as: UInt64.self)
            }
        }
    }

    @inlinable @inline(__always)
    public mutating func increment(_ reason: DropReason) { addOne(to: &storage, at: reason.rawValue) }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        DropReason.allCases.allSatisfy { lhs[$0] == rhs[$0] }
    }
}

/// One counter per `AdvertKind`, stored inline.
public struct KindCounts: Equatable, Sendable {
    @usableFromInline var storage: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0)

    @inlinable public init() {}

    @inlinable
    public subscript(kind: AdvertKind) -> UInt64 {
        get { withUnsafeBytes(of: storage) { $0.load(fromByteOffset: Int(kind.rawValue) * 8, as: UInt64.self) } }
        set {
            withUnsafeMutableBytes(of: &storage) {
                $0.storeBytes(of: newValue, toByteOffset: Int(kind.rawValue) * 8, as: UInt64.self)
            }
        }
    }

    @inlinable @inline(__always)
    public mutating func increment(_ kind: AdvertKind) { addOne(to: &storage, at: Int(kind.rawValue)) }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        AdvertKind.allCases.allSatisfy { lhs[$0] == rhs[$0] }
    }
}

/// Adds one to the `index`th `UInt64` of a tuple of counters, in place: `counts[index] += 1` through a subscript
/// would copy the whole tuple out and back for every advert.
@inlinable @inline(__always)
func addOne<Storage>(to storage: inout Storage, at index: Int) {
    withUnsafeMutableBytes(of: &storage) { counts in
        let offset = index * 8
        counts.storeBytes(
            of: counts.load(fromByteOffset: offset, as: UInt64.self) &+ 1, toByteOffset: offset, as: UInt64.self)
    }
}
