/// The container formats beacond reads, told apart by their first bytes (never by the file name).
public enum CaptureFormat: String, CaseIterable, Sendable {
    case pcap
    case pcapng
    case btsnoop
    case hexText = "hex"

    /// How many leading bytes `detect` wants to see (fewer is fine for a short file).
    public static let detectionLength = 512

    public enum Detection: Equatable, Sendable {
        case format(CaptureFormat)
        case empty
        case unknown(firstBytes: String)
    }

    /// Looks at the start of a file. Text is recognised when the prefix is printable ASCII (and tabs and
    /// line breaks); whether its lines are hex is the framer's business.
    public static func detect(_ prefix: UnsafeRawBufferPointer) -> Detection {
        guard !prefix.isEmpty else { return .empty }
        var reader = ByteReader(prefix)
        if let word = reader.u32(.little) {
            if PcapFramer.magic(word) != nil { return .format(.pcap) }
            if word == PcapNGFramer.BlockType.sectionHeader { return .format(.pcapng) }
        }
        if prefix.starts(with: BTSnoopFramer.magic) { return .format(.btsnoop) }
        let looksLikeText = prefix.prefix(detectionLength).allSatisfy { byte in
            (0x20...0x7E).contains(byte) || byte == 0x09 || byte == 0x0A || byte == 0x0D
        }
        if looksLikeText, HexTextFramer.firstLineLooksLikePacket(prefix) { return .format(.hexText) }
        let shown = prefix.prefix(8).map { byte -> String in
            var text: [UInt8] = []
            text.appendHexByte(byte)
            return String(asciiBytes: text)
        }
        return .unknown(firstBytes: shown.joined(separator: " "))
    }

    public var displayName: String {
        switch self {
        case .pcap: "pcap"
        case .pcapng: "pcapng"
        case .btsnoop: "btsnoop"
        case .hexText: "hex text"
        }
    }
}
