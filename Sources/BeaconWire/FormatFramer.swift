/// The framer a capture's format calls for, behind one type, so that the record loop is compiled once and
/// calls its body from one place: the caller's per-record closure is then inlined into the loop instead of
/// called per record. pcap, what a Linux capture nearly always is, is inlined too; the other formats' framers
/// are called out of line, so that their code does not crowd the pcap loop.
@usableFromInline
struct FormatFramer: CaptureFramer {
    // `others == .none` says the same as `format == .pcap`, but testing an enum with payloads on every record costs
    // more than testing this one byte; this is the test the record loop makes.
    @usableFromInline let format: CaptureFormat
    @usableFromInline var pcap = PcapFramer()
    @usableFromInline var others: OtherFramer

    @usableFromInline
    enum OtherFramer {
        case none
        case pcapng(PcapNGFramer)
        case btsnoop(BTSnoopFramer)
        case hexText(HexTextFramer)
    }

    @inlinable
    init(_ format: CaptureFormat) {
        self.format = format
        switch format {
        case .pcap: others = .none
        case .pcapng: others = .pcapng(PcapNGFramer())
        case .btsnoop: others = .btsnoop(BTSnoopFramer())
        case .hexText: others = .hexText(HexTextFramer())
        }
    }

    @inlinable @inline(__always)
    mutating func next(_ window: UnsafeMutableRawBufferPointer, atEnd: Bool) -> FrameStep {
        if case .pcap = format { return pcap.next(window, atEnd: atEnd) }
        return Self.next(&others, window, atEnd: atEnd)
    }

    // Static, and given only `others`: the call passes the other framers' state, not the whole of this one with the
    // pcap framer's, which the record loop keeps in registers. Each framer is moved out of the enum while it works,
    // so a pcapng framer's interface list is not copied on write.
    @usableFromInline @inline(never)
    static func next(_ others: inout OtherFramer, _ window: UnsafeMutableRawBufferPointer, atEnd: Bool) -> FrameStep {
        switch others {
        case .none: return .corrupt(.corruptRecord)  // only a pcap framer has no other framer, and it is not called
        case .pcapng(var framer):
            others = .none
            defer { others = .pcapng(framer) }
            return framer.next(window, atEnd: atEnd)
        case .btsnoop(var framer):
            others = .none
            defer { others = .btsnoop(framer) }
            return framer.next(window, atEnd: atEnd)
        case .hexText(var framer):
            others = .none
            defer { others = .hexText(framer) }
            return framer.next(window, atEnd: atEnd)
        }
    }
}
