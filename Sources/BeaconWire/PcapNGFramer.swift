/// pcapng: a sequence of blocks (`type`, `total length`, body, `total length`) in sections, each
/// section opened by a Section Header Block that fixes its byte order and forgets earlier interfaces.
///
/// Packets come from Enhanced (EPB), Simple (SPB) and the obsolete Packet Blocks; each refers to an
/// Interface Description Block (IDB) for its link type and timestamp resolution. Other blocks are skipped.
public struct PcapNGFramer: CaptureFramer {
    enum BlockType {
        static let sectionHeader: UInt32 = 0x0A0D_0D0A
        static let interfaceDescription: UInt32 = 1
        static let obsoletePacket: UInt32 = 2
        static let simplePacket: UInt32 = 3
        static let enhancedPacket: UInt32 = 6
    }
    static let byteOrderMagic: UInt32 = 0x1A2B_3C4D
    /// A file describing more interfaces than this is not a Bluetooth capture anyone made.
    static let maxInterfaces = 1_024

    struct Interface {
        var link: LinkHeader
        var snapshotLength: Int
        var timestamps: PcapNGTimestampResolution
        var adapter: UInt16?
    }

    private var order: ByteOrder?
    private var interfaces: [Interface] = []

    public init() {}

    public mutating func next(_ window: UnsafeMutableRawBufferPointer, atEnd: Bool) -> FrameStep {
        var reader = ByteReader(UnsafeRawBufferPointer(window))
        guard reader.remaining >= 12 else { return .needMore(12) }
        let rawType = reader.u32(.little)!
        if rawType == BlockType.sectionHeader {
            // The byte-order magic after the length decides how to read the length itself.
            _ = reader.skip(4)
            switch reader.u32(.little)! {
            case Self.byteOrderMagic: order = .little
            case Self.byteOrderMagic.byteSwapped: order = .big
            default: return .corrupt(.corruptRecord)
            }
            interfaces.removeAll(keepingCapacity: true)
        }
        guard let order else { return .corrupt(.corruptRecord) }
        reader = ByteReader(UnsafeRawBufferPointer(window))
        let type = reader.u32(order)!
        let length = Int(reader.u32(order)!)
        guard length >= 12, length % 4 == 0 else { return .corrupt(.corruptRecord) }

        switch type {
        case BlockType.interfaceDescription, BlockType.enhancedPacket, BlockType.simplePacket, BlockType.obsoletePacket:
            guard length <= maxCaptureRecordLength + 64 else {
                return type == BlockType.interfaceDescription
                    ? .skipped(consumed: length) : .dropped(.corruptRecord, consumed: length)
            }
            guard window.count >= length else { return .needMore(length) }
            let block = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(window)[0..<length])
            guard ByteReader(block, offset: length - 4).peekU32(order) == UInt32(length) else {
                return .corrupt(.corruptRecord)
            }
            return type == BlockType.interfaceDescription
                ? describeInterface(block, order: order)
                : packet(type: type, block: block, order: order)
        default:
            return .skipped(consumed: length)
        }
    }

    private mutating func describeInterface(_ block: UnsafeRawBufferPointer, order: ByteOrder) -> FrameStep {
        var reader = ByteReader(UnsafeRawBufferPointer(rebasing: block[8..<(block.count - 4)]))
        guard let linkType = reader.u16(order), reader.skip(2), let snapshotLength = reader.u32(order) else {
            return .skipped(consumed: block.count)
        }
        var interface = Interface(
            link: LinkHeader(pcapLinkType: UInt32(linkType)), snapshotLength: Int(snapshotLength),
            timestamps: PcapNGTimestampResolution(), adapter: nil)
        PcapNGOptions.forEach(in: &reader, order: order) { code, value in
            switch code {
            case 2: interface.adapter = PcapNGOptions.adapterIndex(interfaceName: value)
            case 9: if let exponent = value.first { interface.timestamps.setResolution(exponent) }
            case 14:
                var option = ByteReader(value)
                if let offset = option.u64(order) { interface.timestamps.offsetSeconds = Int64(bitPattern: offset) }
            default: break
            }
        }
        if interfaces.count < Self.maxInterfaces { interfaces.append(interface) }
        return .skipped(consumed: block.count)
    }

    private func packet(type: UInt32, block: UnsafeRawBufferPointer, order: ByteOrder) -> FrameStep {
        var reader = ByteReader(UnsafeRawBufferPointer(rebasing: block[8..<(block.count - 4)]))
        let interfaceID: Int
        var timestamp: UInt64?
        let captured: Int
        switch type {
        case BlockType.simplePacket:
            guard let original = reader.u32(order) else { return .dropped(.corruptRecord, consumed: block.count) }
            interfaceID = 0
            let snap = interfaces.first.map { $0.snapshotLength } ?? 0
            captured = min(Int(original), reader.remaining, snap == 0 ? Int.max : snap)
        case BlockType.obsoletePacket:
            guard let id = reader.u16(order), reader.skip(2), let high = reader.u32(order), let low = reader.u32(order),
                let length = reader.u32(order), reader.skip(4)
            else { return .dropped(.corruptRecord, consumed: block.count) }
            (interfaceID, timestamp, captured) = (Int(id), UInt64(high) << 32 | UInt64(low), Int(length))
        default:
            guard let id = reader.u32(order), let high = reader.u32(order), let low = reader.u32(order),
                let length = reader.u32(order), reader.skip(4)
            else { return .dropped(.corruptRecord, consumed: block.count) }
            (interfaceID, timestamp, captured) = (Int(id), UInt64(high) << 32 | UInt64(low), Int(length))
        }
        guard interfaceID < interfaces.count else { return .dropped(.unknownInterface, consumed: block.count) }
        guard let payload = reader.slice(captured) else { return .dropped(.corruptRecord, consumed: block.count) }
        let interface = interfaces[interfaceID]
        let record = CaptureRecord(
            time: timestamp.flatMap { interface.timestamps.time($0) }, link: interface.link,
            adapter: interface.adapter, payload: payload)
        return .record(record, consumed: block.count)
    }
}

extension ByteReader {
    func peekU32(_ order: ByteOrder) -> UInt32? {
        var copy = self
        return copy.u32(order)
    }
}
