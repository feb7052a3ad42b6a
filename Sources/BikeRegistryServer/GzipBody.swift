import CompressNIO
import NIOCore

/// A body gzip-compressed once (the stations' list, per version), and whether a request takes it.
enum GzipBody {
    static func compress(_ body: ByteBuffer) throws -> ByteBuffer {
        var body = body
        return try body.compress(with: .gzip())
    }

    /// Whether `Accept-Encoding` takes gzip: named (or `*`) with a weight above 0, as RFC 9110 reads it
    /// (`gzip;q=0` refuses it). On bytes, as the station routes read every refresh's headers.
    static func accepted(_ header: String?) -> Bool {
        guard let header else { return false }
        var accepted = false
        for part in header.utf8.split(separator: UInt8(ascii: ",")) {
            let fields = part.split(separator: UInt8(ascii: ";"))
            guard let coding = fields.first.map(trimmed) else { continue }
            let named = lowered(coding)
            guard named == Array("gzip".utf8) || named == Array("x-gzip".utf8) || named == [UInt8(ascii: "*")]
            else { continue }
            let refused = fields.dropFirst().contains { parameter in
                let text = lowered(trimmed(parameter))
                guard text.starts(with: Array("q=".utf8)) else { return false }
                return (Double(String(decoding: text.dropFirst(2), as: UTF8.self)) ?? 1) <= 0
            }
            if named == [UInt8(ascii: "*")] {
                accepted = accepted || !refused
            } else {
                return !refused  // named outright: its own weight decides, whatever `*` said
            }
        }
        return accepted
    }

    private static func trimmed(_ bytes: some Collection<UInt8>) -> ArraySlice<UInt8> {
        let array = Array(bytes)
        let start = array.firstIndex { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") } ?? array.endIndex
        let end = array.lastIndex { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }.map { $0 + 1 } ?? start
        return array[start..<max(start, end)]
    }

    private static func lowered(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        bytes.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }
    }
}
