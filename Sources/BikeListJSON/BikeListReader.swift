public import BeaconEngine

/// Reads the registry's bike list piece by piece, as it arrives, handing out one entry at a time: the whole
/// document is never held, so the largest list the daemon takes costs the memory of its result, not of its text
/// and a decoded copy of it.
///
/// Two shapes: `.answer`, a JSON array of bike objects (`GET /bikes`); and `.cache`, a JSON object whose `bikes`
/// key holds such an array and whose other keys (small) are handed out whole (`BikeCache`'s file). The reader
/// follows the document's structure byte by byte (strings, escapes, nesting) to find where each element ends; each
/// element is then decoded alone (`BikeList.element`, which never fails the list), so one bad entry is skipped and
/// counted, as before. What is not JSON, or not the expected shape, fails the whole list.
public struct BikeListReader: Sendable {
    public enum Shape: Sendable { case answer, cache }

    public enum Item {
        case entry(BikeList.Entry)
        case rejected(BikeList.Rejection)
        /// A top-level key of the cache other than `bikes`, with its value's JSON.
        case field(String, [UInt8])
    }

    /// An element larger than this is not decoded (skipped as `.tooLarge`); no bike needs a tenth of it.
    public static let elementLimit = 64 * 1024

    private enum Position: Sendable {
        /// Before the first byte that is not white space.
        case start
        /// A top-level value that is not the expected container: kept (to 64 KiB) to tell wrong JSON from no JSON.
        case wrongTop
        /// In the array of bikes, between elements or in one.
        case elements
        /// In the cache object: waiting for a key, in it, after it, or in a field's value.
        case key, inKey, colon, value, fieldValue
        /// After the top-level value.
        case end
    }

    private let shape: Shape
    private var position = Position.start
    private var depth = 0
    private var inString = false
    private var escaped = false
    /// Depth of the array whose elements are bikes (1 in an answer, 2 in a cache).
    private var elementDepth = 1
    private var capturing = false
    private var buffer: [UInt8] = []
    private var oversized = false
    private var key = ""
    /// A comma has ended the last element, so another must follow (`[1,]` is not JSON).
    private var sawSeparator = false
    private var sawBikes = false

    public init(shape: Shape) { self.shape = shape }

    /// Reads the next piece of the document; `body` gets every item completed in it.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer, _ body: (Item) -> Void) throws(BikeListError) {
        var index = 0
        while index < bytes.count {
            // Inside an element, which is nearly every byte of a list: find its end in one pass and copy it whole,
            // rather than one byte at a time through the state machine.
            if capturing, case .elements = position, !oversized {
                let start = index
                while index < bytes.count {
                    let byte = bytes[index]
                    if inString {
                        stringByte(byte)
                    } else if depth == elementDepth && (byte == UInt8(ascii: ",") || byte == UInt8(ascii: "]")) {
                        break
                    } else {
                        track(byte)
                    }
                    index += 1
                }
                appendRun(UnsafeRawBufferPointer(rebasing: bytes[start..<index]))
                if index == bytes.count { return }
            }
            try take(bytes[index], body)
            index += 1
        }
    }

    /// The same for bytes held in any contiguous collection.
    public mutating func feed(_ bytes: some Collection<UInt8>, _ body: (Item) -> Void) throws(BikeListError) {
        let outcome = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(BikeListError) in try feed(UnsafeRawBufferPointer(buffer), body) }
        }
        if let outcome { return try outcome.get() }
        let copy = Array(bytes)
        let result = copy.withUnsafeBytes { buffer in Result { () throws(BikeListError) in try feed(buffer, body) } }
        try result.get()
    }

    /// The document has ended: throws unless it was a whole list of the expected shape.
    public mutating func finish(_ body: (Item) -> Void) throws(BikeListError) {
        switch position {
        case .end:
            if shape == .cache && !sawBikes { throw BikeListError(.notAnArray) }
        case .wrongTop where depth == 0 && !inString:
            // A whole scalar at the top: valid JSON of the wrong shape, or not JSON at all.
            throw BikeListError(Self.isJSON(buffer) ? .notAnArray : .notJSON)
        default: throw BikeListError(.notJSON)
        }
    }

    /// One byte outside an element's fast run: the state machine, one phase of the document per function.
    private mutating func take(_ byte: UInt8, _ body: (Item) -> Void) throws(BikeListError) {
        if inString {
            if capturing { append(byte) }
            if stringByte(byte), case .inKey = position {
                key = String(decoding: buffer.dropFirst().dropLast(), as: UTF8.self)
                capturing = false
                position = .colon
            }
            return
        }
        let isSpace = byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
        switch position {
        case .start:
            if !isSpace { try begin(byte) }
        case .wrongTop:
            track(byte)
            append(byte)
            if depth == 0 && !inString && (byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]")) {
                throw BikeListError(Self.isJSON(buffer) ? .notAnArray : .notJSON)
            }
        case .elements:
            try elements(byte, isSpace: isSpace, body)
        case .key, .inKey, .colon, .value, .fieldValue:
            try cacheField(byte, isSpace: isSpace, body)
        case .end:
            guard isSpace else { throw BikeListError(.notJSON) }
        }
    }

    /// The document's first byte: the container the shape expects, or a wrong top-level value.
    private mutating func begin(_ byte: UInt8) throws(BikeListError) {
        if byte == UInt8(ascii: "["), shape == .answer {
            (depth, elementDepth, position) = (1, 1, .elements)
        } else if byte == UInt8(ascii: "{"), shape == .cache {
            (depth, position) = (1, .key)
        } else {
            // `{"bikes":[]}` given as an answer, `[…]` as a cache, or a scalar: wrong shape (if JSON at all).
            position = .wrongTop
            capturing = true
            track(byte)
            append(byte)
        }
    }

    /// In the array of bikes: an element's end, the array's end, or the start of the next element.
    private mutating func elements(_ byte: UInt8, isSpace: Bool, _ body: (Item) -> Void) throws(BikeListError) {
        if capturing {
            if depth == elementDepth && (byte == UInt8(ascii: ",") || byte == UInt8(ascii: "]")) {
                try emitElement(body)
                if byte == UInt8(ascii: "]") { closeElements() } else { sawSeparator = true }
                return
            }
            track(byte)
            append(byte)
            return
        }
        if isSpace { return }
        if byte == UInt8(ascii: "]") {
            // `[]` is an empty list; `[1,]` is not JSON.
            if sawSeparator { throw BikeListError(.notJSON) }
            closeElements()
            return
        }
        if byte == UInt8(ascii: ",") { throw BikeListError(.notJSON) }
        capturing = true
        sawSeparator = false
        buffer.removeAll(keepingCapacity: true)
        oversized = false
        track(byte)
        append(byte)
    }

    /// In the cache's object: its keys, and each value other than the bikes' array, handed out whole.
    private mutating func cacheField(_ byte: UInt8, isSpace: Bool, _ body: (Item) -> Void) throws(BikeListError) {
        switch position {
        case .key:
            if isSpace || byte == UInt8(ascii: ",") { return }
            if byte == UInt8(ascii: "}") {
                depth = 0
                position = .end
                return
            }
            guard byte == UInt8(ascii: "\"") else { throw BikeListError(.notJSON) }
            buffer.removeAll(keepingCapacity: true)
            capturing = true
            append(byte)
            inString = true
            position = .inKey
        case .colon:
            if isSpace { return }
            guard byte == UInt8(ascii: ":") else { throw BikeListError(.notJSON) }
            position = .value
        case .value:
            if !isSpace { try value(byte) }
        case .fieldValue:
            if depth == 1 && (byte == UInt8(ascii: ",") || byte == UInt8(ascii: "}")) {
                capturing = false
                if !oversized { body(.field(key, buffer)) }
                if byte == UInt8(ascii: "}") {
                    depth = 0
                    position = .end
                } else {
                    position = .key
                }
                return
            }
            track(byte)
            append(byte)
        case .start, .wrongTop, .elements, .inKey, .end:
            break  // (a key's bytes are all in its string, handled in `take`; the rest are not the cache's fields)
        }
    }

    /// A cache key's value begins: the bikes' array, or a field kept whole.
    private mutating func value(_ byte: UInt8) throws(BikeListError) {
        if key == "bikes" {
            guard byte == UInt8(ascii: "[") else { throw BikeListError(.notAnArray) }
            (depth, elementDepth, position, sawBikes) = (2, 2, .elements, true)
            return
        }
        buffer.removeAll(keepingCapacity: true)
        oversized = false
        capturing = true
        position = .fieldValue
        track(byte)
        append(byte)
    }

    /// One byte inside a string: escapes, and its end. True when the byte closed the string.
    @discardableResult
    private mutating func stringByte(_ byte: UInt8) -> Bool {
        if escaped {
            escaped = false
        } else if byte == UInt8(ascii: "\\") {
            escaped = true
        } else if byte == UInt8(ascii: "\"") {
            inString = false
            return true
        }
        return false
    }

    /// Nesting outside strings.
    private mutating func track(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): inString = true
        case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
        case UInt8(ascii: "}"), UInt8(ascii: "]"): depth -= 1
        default: break
        }
    }

    private mutating func appendRun(_ run: UnsafeRawBufferPointer) {
        guard !oversized else { return }
        if buffer.count + run.count > Self.elementLimit {
            oversized = true
            buffer.removeAll()
        } else {
            buffer.append(contentsOf: run)
        }
    }

    private mutating func append(_ byte: UInt8) {
        guard !oversized else { return }
        if buffer.count >= Self.elementLimit {
            oversized = true
            buffer.removeAll()
        } else {
            buffer.append(byte)
        }
    }

    /// The end of the bikes' array: the answer is done; in a cache, more keys may follow.
    private mutating func closeElements() {
        capturing = false
        if elementDepth == 1 {
            depth = 0
            position = .end
        } else {
            depth = 1
            position = .key
        }
    }

    private mutating func emitElement(_ body: (Item) -> Void) throws(BikeListError) {
        capturing = false
        if oversized {
            body(.rejected(.tooLarge))
            return
        }
        guard let outcome = buffer.withUnsafeBytes(BikeList.element) else { throw BikeListError(.notJSON) }
        switch outcome {
        case .entry(let entry): body(.entry(entry))
        case .rejected(let reason): body(.rejected(reason))
        }
    }

    /// Whether `bytes` are one JSON value (of any kind).
    static func isJSON(_ bytes: [UInt8]) -> Bool { bytes.withUnsafeBytes(BikeList.isJSONValue) }
}
