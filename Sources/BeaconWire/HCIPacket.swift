/// An HCI packet taken out of its link-layer framing.
public struct HCIPacket {
    public enum Kind: UInt8, Sendable {
        case command = 1
        case acl = 2
        case sco = 3
        case event = 4
        case iso = 5
    }

    public var kind: Kind
    /// `nil` where the container does not say (pcap link type 187, hex text without markers).
    public var incoming: Bool?
    public var adapter: UInt16?
    /// The packet after its type byte: for an event, the event code, parameter length and parameters.
    public var body: UnsafeRawBufferPointer

    /// Monitor-channel opcodes (BlueZ `src/shared/btsnoop.h`) that carry HCI packets.
    @usableFromInline
    static func kind(monitorOpcode opcode: UInt16) -> (Kind, incoming: Bool)? {
        switch opcode {
        case 2: (.command, false)
        case 3: (.event, true)
        case 4: (.acl, false)
        case 5: (.acl, true)
        case 6: (.sco, false)
        case 7: (.sco, true)
        case 18: (.iso, false)
        case 19: (.iso, true)
        default: nil  // new/del/open/close index, index info, notes, logging, control channel
        }
    }

    /// Unwraps a record. Returns `nil` for records that carry no HCI packet (counted as skipped) and for
    /// malformed ones (counted as dropped).
    @inlinable @inline(__always)
    public init?(_ record: CaptureRecord, counters: inout DecodeCounters) {
        var reader = ByteReader(record.payload)
        var adapter = record.adapter
        let kind: Kind
        var incoming: Bool?
        switch record.link {
        case .h4(let direction):
            incoming = direction
            guard let parsed = Self.h4Kind(&reader, counters: &counters) else { return nil }
            kind = parsed
        case .h4WithDirection:
            guard let direction = reader.u32(.big) else {
                counters.drop(.badPacketType)
                return nil
            }
            incoming = direction != 0
            guard let parsed = Self.h4Kind(&reader, counters: &counters) else { return nil }
            kind = parsed
        case .monitor:
            guard let index = reader.u16(.big), let opcode = reader.u16(.big) else {
                counters.drop(.badPacketType)
                return nil
            }
            guard let parsed = Self.kind(monitorOpcode: opcode) else {
                counters.skipped += 1
                return nil
            }
            (kind, incoming, adapter) = (parsed.0, parsed.incoming, index)
        case .monitorFields(let index, let opcode):
            guard let parsed = Self.kind(monitorOpcode: opcode) else {
                counters.skipped += 1
                return nil
            }
            (kind, incoming, adapter) = (parsed.0, parsed.incoming, index)
        case .hciUnencapsulated(let received, let commandOrEvent):
            incoming = received
            kind = commandOrEvent ? (received ? .event : .command) : .acl
        case .unsupported:
            counters.drop(.unknownLinkType)
            return nil
        }
        self.kind = kind
        self.incoming = incoming
        self.adapter = adapter
        self.body = UnsafeRawBufferPointer(rebasing: reader.bytes[reader.offset...])
    }

    @inlinable @inline(__always)
    static func h4Kind(_ reader: inout ByteReader, counters: inout DecodeCounters) -> Kind? {
        guard let type = reader.u8(), let kind = Kind(rawValue: type) else {
            counters.drop(.badPacketType)
            return nil
        }
        return kind
    }
}
