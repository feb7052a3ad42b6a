/// One whole HTTP/1.1 `GET` head at the front of the bytes a connection read, as a station's refresh sends it: the
/// request line, then `name: value` lines, then an empty line. Pure: bytes in, fields out.
///
/// `RefreshFastPath` answers from it without the HTTP decoder, so it reads far less than RFC 9112 allows, and
/// anything outside that is nil and left to the decoder (llhttp), which reads it in full: another method or
/// version, a target or value with a byte outside printable ASCII (tab allowed in values), a name that is not a
/// token, space before a colon, a folded line, a bare LF, a head over `limit`, a head not yet whole, any header that
/// frames a body or changes the connection (`Content-Length`, `Transfer-Encoding`, `Connection`, `Upgrade`,
/// `Expect`), and any of the headers read here given twice. Stricter than the decoder is safe; reading a request
/// differently from it would not be, so nothing it might read another way is read here.
struct PlainGetHead: Equatable {
    var target: String
    var authorization: String?
    var ifNoneMatch: String?
    var userAgent: String?
    var acceptEncoding: String?
    var instanceManipulation: String?
    /// The head's bytes, its empty line included: where the next request starts.
    var length: Int

    /// The longest head read here; a longer one is the decoder's.
    static let limit = 8192

    /// What the front of the bytes read holds.
    enum Front: Equatable {
        case head(PlainGetHead)
        /// The start of a `GET` head not yet whole, under `limit`: more bytes are needed to tell.
        case incomplete
        /// Anything else: the decoder's.
        case other
    }

    /// What the front of `bytes` holds.
    static func front(_ bytes: UnsafeRawBufferPointer) -> Front {
        if let head = parse(bytes) { return .head(head) }
        let get = "GET ".utf8
        let started = zip(bytes, get).allSatisfy { $0 == $1 }
        guard started, bytes.count < limit, !Self.hasEnd(bytes) else { return .other }
        return .incomplete
    }

    /// Whether `bytes` hold a head's end (an empty line).
    private static func hasEnd(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count >= 4 else { return false }
        for index in 0...(bytes.count - 4)
        where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return true
        }
        return false
    }

    /// The head at the front of `bytes`, or nil for anything the decoder must read or a head not yet whole.
    static func parse(_ bytes: UnsafeRawBufferPointer) -> PlainGetHead? {
        var reader = Reader(bytes: bytes, end: min(bytes.count, limit))
        guard reader.skip("GET "), let target = reader.target(), reader.skip(" HTTP/1.1\r\n") else { return nil }
        var head = PlainGetHead(target: target, length: 0)
        while true {
            if reader.skip("\r\n") {
                head.length = reader.index
                return head
            }
            guard let (name, value) = reader.field() else { return nil }
            guard head.take(name: name, value: value) else { return nil }
        }
    }

    /// Keeps a field read here; false for one that leaves the request to the decoder.
    private mutating func take(name: Name, value: String) -> Bool {
        func once(_ field: inout String?) -> Bool {
            guard field == nil else { return false }
            field = value
            return true
        }
        switch name {
        case .authorization: return once(&authorization)
        case .ifNoneMatch: return once(&ifNoneMatch)
        case .userAgent: return once(&userAgent)
        case .acceptEncoding: return once(&acceptEncoding)
        case .instanceManipulation: return once(&instanceManipulation)
        case .framing: return false
        case .other: return true
        }
    }

    enum Name {
        case authorization, ifNoneMatch, userAgent, acceptEncoding, instanceManipulation
        /// A header that frames a body or changes the connection.
        case framing
        case other

        private static let known: [(String, Name)] = [
            ("authorization", .authorization), ("if-none-match", .ifNoneMatch), ("user-agent", .userAgent),
            ("accept-encoding", .acceptEncoding), ("a-im", .instanceManipulation), ("content-length", .framing),
            ("transfer-encoding", .framing), ("connection", .framing), ("upgrade", .framing), ("expect", .framing),
        ]

        /// The name's kind, its letters in any case.
        init(_ bytes: UnsafeRawBufferPointer.SubSequence) {
            for (name, kind) in Self.known where name.utf8.count == bytes.count {
                if zip(bytes, name.utf8).allSatisfy({ $0 | 0x20 == $1 }) {
                    self = kind
                    return
                }
            }
            self = .other
        }
    }

    /// A cursor over the head's bytes.
    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        let end: Int
        var index = 0

        /// Moves past `text` if the bytes start with it here.
        mutating func skip(_ text: StaticString) -> Bool {
            let count = text.utf8CodeUnitCount
            guard index + count <= end else { return false }
            for offset in 0..<count where bytes[index + offset] != text.utf8Start[offset] { return false }
            index += count
            return true
        }

        /// The request target, in origin form: `/`, then printable ASCII up to a space.
        mutating func target() -> String? {
            let start = index
            guard index < end, bytes[index] == UInt8(ascii: "/") else { return nil }
            while index < end, bytes[index] > 0x20, bytes[index] < 0x7F { index += 1 }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }

        /// One `name: value` line and its CRLF, the value without the spaces before it; those after it are kept, as
        /// NIO's decoder keeps them (what reads the value trims it, whichever read it).
        mutating func field() -> (Name, String)? {
            let start = index
            while index < end, Self.isToken(bytes[index]) { index += 1 }
            guard index > start, index < end, bytes[index] == UInt8(ascii: ":") else { return nil }
            let name = Name(bytes[start..<index])
            index += 1
            while index < end, bytes[index] == UInt8(ascii: " ") || bytes[index] == UInt8(ascii: "\t") { index += 1 }
            let valueStart = index
            while index < end, bytes[index] != UInt8(ascii: "\r") {
                let byte = bytes[index]
                guard (byte >= 0x20 && byte < 0x7F) || byte == UInt8(ascii: "\t") else { return nil }
                index += 1
            }
            let valueEnd = index
            guard skip("\r\n") else { return nil }
            return (name, String(decoding: bytes[valueStart..<valueEnd], as: UTF8.self))
        }

        /// RFC 9110's tchar.
        private static func isToken(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                return true
            default:
                return "!#$%&'*+-.^_`|~".utf8.contains(byte)
            }
        }
    }
}
