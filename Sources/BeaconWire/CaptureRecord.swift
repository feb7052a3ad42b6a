/// How a record's payload frames its HCI packet. Containers differ only in this and in their timestamps.
public enum LinkHeader: Equatable, Sendable {
    /// H4 (UART): a packet-type byte, then the packet. pcap link type 187, btsnoop datalink 1002
    /// (which gives the direction in its flags), and hex text (where `>`/`<` give it).
    case h4(incoming: Bool?)
    /// pcap link type 201: a 4-byte big-endian direction (0 sent, 1 received), then H4.
    case h4WithDirection
    /// pcap link type 254, the Linux monitor channel: big-endian adapter index and opcode, then the packet.
    case monitor
    /// btsnoop datalink 2001 (`btmon -w`): the monitor header lives in the record's flags.
    case monitorFields(adapter: UInt16, opcode: UInt16)
    /// btsnoop datalink 1001: a bare HCI packet whose type and direction are in the record's flags.
    case hciUnencapsulated(incoming: Bool, commandOrEvent: Bool)
    /// A link type beacond does not decode (the value is kept for the error count).
    case unsupported(UInt32)

    /// The container's link type number mapped to a header, or `.unsupported`.
    @inlinable
    public init(pcapLinkType: UInt32) {
        switch pcapLinkType {
        case 187: self = .h4(incoming: nil)
        case 201: self = .h4WithDirection
        case 254: self = .monitor
        default: self = .unsupported(pcapLinkType)
        }
    }
}

/// One record of a capture file, borrowed from the reader's buffer: valid until the reader moves on.
public struct CaptureRecord {
    public var time: CaptureTime?
    public var link: LinkHeader
    /// The adapter named by the container itself (a pcapng interface called `bluetooth0`, an `hcidump`
    /// `device: hci0` line); a monitor header's index takes precedence.
    public var adapter: UInt16?
    public var payload: UnsafeRawBufferPointer

    @inlinable
    public init(time: CaptureTime?, link: LinkHeader, adapter: UInt16? = nil, payload: UnsafeRawBufferPointer) {
        self.time = time
        self.link = link
        self.adapter = adapter
        self.payload = payload
    }
}
