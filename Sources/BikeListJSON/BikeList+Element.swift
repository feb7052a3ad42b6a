import BeaconEngine

/// One element of the bike list, read straight from its JSON bytes: the nine keys beacond uses are decoded, every
/// other value is checked to be JSON and skipped (so `deviceToken` and other owner data are never decoded at all).
/// It never fails the list for a wrong type (the entry is rejected, with its reason); only bytes that are not JSON
/// do (`nil`).
///
/// Written by hand rather than with JSONDecoder, which a list read element by element would set up 137,000 times
/// for the largest list (docs/performance-history.md, "The bike list"); the rules are JSONDecoder's: integers may be written with a
/// fraction or exponent if their value is whole, `null` is an absent optional, descriptions of the wrong type are
/// dropped, not the bike.
extension BikeList {
    enum ElementOutcome {
        case entry(Entry)
        case rejected(Rejection)
    }

    static func element(_ bytes: UnsafeRawBufferPointer) -> ElementOutcome? {
        var parser = ElementParser(bytes: bytes)
        return parser.element()
    }

    /// Whether the bytes are one JSON value, white space around it allowed.
    static func isJSONValue(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var parser = ElementParser(bytes: bytes)
        parser.skipSpace()
        guard parser.value(decodingStrings: false) != nil else { return false }
        parser.skipSpace()
        return parser.index == bytes.count
    }
}

struct ElementParser {
    let bytes: UnsafeRawBufferPointer
    var index = 0

    init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    /// A decoded scalar; containers are checked and skipped.
    enum Value {
        case string(String)
        case number(Double, integer: Int?)
        case bool(Bool)
        case null
        case container
        /// `beaconIdentities`, when it is a list of [major, minor] pairs: each `major << 16 | minor`.
        case identities([UInt32])
    }

    mutating func element() -> BikeList.ElementOutcome? {
        skipSpace()
        guard index < bytes.count else { return nil }
        guard bytes[index] == UInt8(ascii: "{") else {
            guard value() != nil else { return nil }
            skipSpace()
            return index == bytes.count ? .rejected(.notAnObject) : nil
        }
        index += 1
        var fields = Fields()
        skipSpace()
        if peek(UInt8(ascii: "}")) {
            index += 1
        } else {
            while true {
                skipSpace()
                guard peek(UInt8(ascii: "\"")), let key = key() else { return nil }
                skipSpace()
                guard peek(UInt8(ascii: ":")) else { return nil }
                index += 1
                skipSpace()
                let value = key == .beaconIdentities ? identities() : value(decodingStrings: key != nil)
                guard let value else { return nil }
                if let key { fields[key] = value }
                skipSpace()
                if peek(UInt8(ascii: ",")) {
                    index += 1
                    continue
                }
                guard peek(UInt8(ascii: "}")) else { return nil }
                index += 1
                break
            }
        }
        skipSpace()
        guard index == bytes.count else { return nil }
        return Self.outcome(fields)
    }

    /// The keys beacond reads, and their values in one element (the last of a repeated key wins, as in JSONDecoder).
    enum Key: Int, CaseIterable {
        case id, beaconMinor, missing, beaconUUID, beaconMajor, make, model, colour, beaconIdentities
        static let names: [[UInt8]] = allCases.map { Array("\($0)".utf8) }
    }

    struct Fields {
        var values = [Value?](repeating: nil, count: Key.allCases.count)
        subscript(_ key: Key) -> Value? {
            get { values[key.rawValue] }
            set { values[key.rawValue] = newValue }
        }
    }

    /// The key at `index` if it is one of `Key`'s, nil for any other; the whole key string is passed over either
    /// way. Keys are compared as bytes; one with an escape in it is decoded first.
    mutating func key() -> Key?? {
        let start = index + 1
        var end = start
        while end < bytes.count, bytes[end] != UInt8(ascii: "\""), bytes[end] != UInt8(ascii: "\\"), bytes[end] >= 0x20
        { end += 1 }
        if end < bytes.count, bytes[end] == UInt8(ascii: "\"") {
            index = end + 1
            let raw = UnsafeRawBufferPointer(rebasing: bytes[start..<end])
            return .some(Key.names.firstIndex { $0.elementsEqual(raw) }.flatMap(Key.init(rawValue:)))
        }
        guard let text = string() else { return nil }
        return .some(Key.allCases.first { "\($0)" == text })
    }

    static func outcome(_ fields: Fields) -> BikeList.ElementOutcome {
        guard case .string(let id)? = fields[.id], !id.isEmpty, id.utf8.count <= 256 else { return .rejected(.badID) }
        // A rotating beacon's bike is named by its identities; its major and minor, if given, are not read.
        var identities: [UInt32] = []
        switch fields[.beaconIdentities] {
        case nil, .null?: break
        case .identities(let list)? where !list.isEmpty: identities = list
        default: return .rejected(.badIdentities)
        }
        var minor: UInt16 = 0
        var major: UInt16?
        if identities.isEmpty {
            guard let parsed = unsigned16(fields[.beaconMinor]) else { return .rejected(.badMinor) }
            minor = parsed
        }
        guard case .bool(let missing)? = fields[.missing] else { return .rejected(.badMissing) }
        switch fields[.beaconMajor] {
        case nil, .null?: major = nil
        case _ where !identities.isEmpty: major = nil
        case let value:
            guard let parsed = unsigned16(value) else { return .rejected(.badMajor) }
            major = parsed
        }
        var uuid: String?
        switch fields[.beaconUUID] {
        case nil, .null?: uuid = nil
        case .string(let text)?: uuid = text
        default: return .rejected(.badUUID)
        }
        func text(_ key: Key) -> String? {
            guard case .string(let value)? = fields[key] else { return nil }
            return String(value.prefix(100))
        }
        return .entry(
            BikeList.Entry(
                id: id, minor: minor, missing: missing, uuid: uuid, major: major, make: text(.make),
                model: text(.model), colour: text(.colour), identities: identities))
    }

    /// A whole number 0…65535, however written (7, 7.0, 7e0).
    static func unsigned16(_ value: Value?) -> UInt16? {
        guard case .number(let double, let integer)? = value else { return nil }
        if let integer { return UInt16(exactly: integer) }
        return UInt16(exactly: double)
    }

    func peek(_ byte: UInt8) -> Bool { index < bytes.count && bytes[index] == byte }

    mutating func skipSpace() {
        while index < bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[index]) { index += 1 }
    }

    mutating func value(decodingStrings: Bool = true) -> Value? {
        guard index < bytes.count else { return nil }
        switch bytes[index] {
        case UInt8(ascii: "\""):
            if decodingStrings { return string().map(Value.string) }
            return skipString() ? .container : nil
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            return container() ? .container : nil
        case UInt8(ascii: "t"): return literal("true") ? .bool(true) : nil
        case UInt8(ascii: "f"): return literal("false") ? .bool(false) : nil
        case UInt8(ascii: "n"): return literal("null") ? .null : nil
        default: return number()
        }
    }

    mutating func literal(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { return false }
        index += count
        return true
    }

    /// JSON's number grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
    mutating func number() -> Value? {
        let start = index
        if peek(UInt8(ascii: "-")) { index += 1 }
        guard index < bytes.count, (0x30...0x39).contains(bytes[index]) else { return nil }
        if bytes[index] == 0x30 {
            index += 1
        } else {
            while index < bytes.count, (0x30...0x39).contains(bytes[index]) { index += 1 }
        }
        var whole = true
        if peek(UInt8(ascii: ".")) {
            whole = false
            index += 1
            guard digits() else { return nil }
        }
        if peek(UInt8(ascii: "e")) || peek(UInt8(ascii: "E")) {
            whole = false
            index += 1
            if peek(UInt8(ascii: "+")) || peek(UInt8(ascii: "-")) { index += 1 }
            guard digits() else { return nil }
        }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        guard let double = Double(text) else { return nil }
        return .number(double, integer: whole ? Int(text) : nil)
    }

    mutating func digits() -> Bool {
        let start = index
        while index < bytes.count, (0x30...0x39).contains(bytes[index]) { index += 1 }
        return index > start
    }

    /// A string's value, escapes decoded (surrogate pairs joined); nil if it is not a valid JSON string.
    mutating func string() -> String? {
        index += 1
        var scalars = String.UnicodeScalarView()
        var run = index
        func flush(_ end: Int) {
            scalars.append(
                contentsOf: String(decoding: UnsafeRawBufferPointer(rebasing: bytes[run..<end]), as: UTF8.self)
                    .unicodeScalars)
        }
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                flush(index)
                index += 1
                return String(scalars)
            }
            if byte < 0x20 { return nil }
            guard byte == UInt8(ascii: "\\") else {
                index += 1
                continue
            }
            flush(index)
            index += 1
            guard index < bytes.count else { return nil }
            let escape = bytes[index]
            index += 1
            switch escape {
            case UInt8(ascii: "\""): scalars.append("\"")
            case UInt8(ascii: "\\"): scalars.append("\\")
            case UInt8(ascii: "/"): scalars.append("/")
            case UInt8(ascii: "b"): scalars.append("\u{8}")
            case UInt8(ascii: "f"): scalars.append("\u{C}")
            case UInt8(ascii: "n"): scalars.append("\n")
            case UInt8(ascii: "r"): scalars.append("\r")
            case UInt8(ascii: "t"): scalars.append("\t")
            case UInt8(ascii: "u"):
                guard var unit = hex4() else { return nil }
                if (0xD800..<0xDC00).contains(unit), peek(UInt8(ascii: "\\")), index + 1 < bytes.count,
                    bytes[index + 1] == UInt8(ascii: "u")
                {
                    let saved = index
                    index += 2
                    if let low = hex4(), (0xDC00..<0xE000).contains(low) {
                        unit = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                    } else {
                        index = saved
                    }
                }
                scalars.append(Unicode.Scalar(unit) ?? "\u{FFFD}")
            default: return nil
            }
            run = index
        }
        return nil
    }

    mutating func hex4() -> UInt32? {
        guard index + 4 <= bytes.count else { return nil }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case 0x30...0x39: digit = byte - 0x30
            case 0x41...0x46: digit = byte - 0x37
            case 0x61...0x66: digit = byte - 0x57
            default: return nil
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    /// A string checked and passed over, not decoded.
    mutating func skipString() -> Bool {
        index += 1
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\""):
                index += 1
                return true
            case UInt8(ascii: "\\"):
                index += 2
            case 0..<0x20:
                return false
            default:
                index += 1
            }
        }
        return false
    }

    /// An object or array checked and passed over, to any depth.
    mutating func container() -> Bool {
        let isObject = bytes[index] == UInt8(ascii: "{")
        let close = isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
        index += 1
        skipSpace()
        if peek(close) {
            index += 1
            return true
        }
        while true {
            skipSpace()
            if isObject {
                guard peek(UInt8(ascii: "\"")), skipString() else { return false }
                skipSpace()
                guard peek(UInt8(ascii: ":")) else { return false }
                index += 1
                skipSpace()
            }
            guard value(decodingStrings: false) != nil else { return false }
            skipSpace()
            if peek(UInt8(ascii: ",")) {
                index += 1
                continue
            }
            guard peek(close) else { return false }
            index += 1
            return true
        }
    }
}
