/// Where a record sits in its file: its 1-based frame number (every record counts, read or dropped)
/// and the file offset just past it.
public struct RecordPosition: Equatable, Sendable {
    public var frame: Int
    public var endOffset: Int

    @inlinable
    public init(frame: Int, endOffset: Int) {
        self.frame = frame
        self.endOffset = endOffset
    }
}

public enum CaptureStreamError: Error {
    case empty
    case unknownFormat(firstBytes: String)
    case read(any Error)
}

/// Streams a capture from a `ByteSource` through the framer its first bytes call for.
///
/// One buffer, allocated at the start, holds a window of the file: records are handed out as borrowed
/// slices of it, and it only grows when a single record is larger than it (up to a fixed limit), so
/// memory does not grow with the file.
public final class CaptureStream<Source: ByteSource> {
    public private(set) var format: CaptureFormat
    /// Records the framer dropped and anything lost at the container level (truncation, corruption).
    /// Records that were read are counted by `AdvertDecoder`.
    @exclusivity(unchecked) public private(set) var counters = DecodeCounters()

    public static var defaultCapacity: Int { 65_536 }
    static var maxCapacity: Int { maxCaptureRecordLength + 65_536 }

    // Internal but visible to inlined code: `forEachRecord` is inlined into its callers so that the whole
    // record loop, framer and decoder included, is compiled as one specialised loop there.
    @usableFromInline var source: Source
    // Only this class touches these, from one thread at a time (it is not Sendable); the runtime exclusivity
    // checks Swift adds to class properties would otherwise cost more than decoding a record.
    @exclusivity(unchecked) @usableFromInline var buffer: UnsafeMutableRawBufferPointer
    @exclusivity(unchecked) @usableFromInline var start = 0
    @exclusivity(unchecked) @usableFromInline var end = 0
    /// The file offset of `buffer[0]`.
    @exclusivity(unchecked) @usableFromInline var bufferOffset = 0
    @exclusivity(unchecked) @usableFromInline var sourceAtEnd = false

    public init(source: Source, capacity: Int = CaptureStream.defaultCapacity) throws(CaptureStreamError) {
        self.source = source
        self.buffer = .allocate(byteCount: max(capacity, CaptureFormat.detectionLength), alignment: 16)
        self.format = .pcap  // replaced below once the first bytes are in
        // Throwing from here on is safe: `deinit` runs and frees the buffer.
        do {
            _ = try fill(atLeast: CaptureFormat.detectionLength)
        } catch {
            throw .read(error)
        }
        switch CaptureFormat.detect(UnsafeRawBufferPointer(rebasing: buffer[start..<end])) {
        case .format(let detected): self.format = detected
        case .empty: throw .empty
        case .unknown(let firstBytes): throw .unknownFormat(firstBytes: firstBytes)
        }
    }

    deinit { buffer.deallocate() }

    /// Calls `body` with every record in order. The record borrows the stream's buffer: copy what you
    /// need before returning. Throws only what `body` or the source throws.
    @inlinable
    public func forEachRecord(_ body: (CaptureRecord, RecordPosition) throws -> Void) throws {
        var framer = FormatFramer(format)
        try drive(&framer, body)
    }

    // Inlined into `forEachRecord`, so the caller gets one loop, specialised for its closure and the framers.
    @inlinable @inline(__always)
    func drive<Framer: CaptureFramer>(_ framer: inout Framer, _ body: (CaptureRecord, RecordPosition) throws -> Void)
        throws
    {
        var frame = 0
        // The window's bounds are kept in locals while records are handed out, not read from and written back to
        // this object for every record; they are stored before `fill` or `discard` moves them and read again
        // after, even when those throw (so that the `defer` below, which stores them when the loop ends however it
        // ends, never puts back bounds the buffer has moved from). `fill` and `discard` keep 0 <= start <= end <=
        // buffer.count, and the buffer is never empty: the window is made without a slice's range checks.
        var base = buffer.baseAddress.unsafelyUnwrapped
        var start = self.start
        var end = self.end
        defer { self.start = start }
        while !(start == end && sourceAtEnd) {
            let window = UnsafeMutableRawBufferPointer(start: base + start, count: end &- start)
            switch framer.next(window, atEnd: sourceAtEnd) {
            case .record(let record, let consumed):
                // 0 < consumed <= window.count, as one unsigned comparison.
                guard UInt(bitPattern: consumed &- 1) < UInt(bitPattern: window.count) else {
                    return stop(.corruptRecord)
                }
                frame &+= 1
                start &+= consumed
                try body(record, RecordPosition(frame: frame, endOffset: bufferOffset + start))
            case .skipped(let consumed):
                guard consumed > 0 else { return stop(.corruptRecord) }
                self.start = start
                defer { (base, start, end) = (buffer.baseAddress.unsafelyUnwrapped, self.start, self.end) }
                try discard(consumed)
            case .dropped(let reason, let consumed):
                guard consumed > 0 else { return stop(.corruptRecord) }
                frame += 1
                countDroppedRecord(reason)
                self.start = start
                defer { (base, start, end) = (buffer.baseAddress.unsafelyUnwrapped, self.start, self.end) }
                try discard(consumed)
            case .needMore(let wanted):
                if sourceAtEnd { return stop(.truncatedRecord) }
                guard wanted > window.count else { return stop(.corruptRecord) }
                self.start = start
                defer { (base, start, end) = (buffer.baseAddress.unsafelyUnwrapped, self.start, self.end) }
                guard try fill(atLeast: wanted) else { return stop(.corruptRecord) }
            case .corrupt(let reason):
                return stop(reason)
            }
        }
    }

    @usableFromInline
    func stop(_ reason: DropReason) {
        counters.drop(reason)
    }

    @usableFromInline
    func countDroppedRecord(_ reason: DropReason) {
        counters.records += 1
        counters.drop(reason)
    }

    /// Makes the window hold at least `wanted` bytes, unless the source ends first. False when a record
    /// would need more buffer than beacond allows.
    @usableFromInline
    func fill(atLeast wanted: Int) throws -> Bool {
        if wanted > buffer.count {
            guard wanted <= Self.maxCapacity else { return false }
            let larger = UnsafeMutableRawBufferPointer.allocate(
                byteCount: min(Self.maxCapacity, max(wanted, buffer.count * 2)), alignment: 16)
            larger.baseAddress!.copyMemory(from: buffer.baseAddress! + start, byteCount: end - start)
            buffer.deallocate()
            buffer = larger
            (bufferOffset, end, start) = (bufferOffset + start, end - start, 0)
        } else if start + wanted > buffer.count {
            // Carry the unread tail to the front.
            buffer.baseAddress!.copyMemory(from: buffer.baseAddress! + start, byteCount: end - start)
            (bufferOffset, end, start) = (bufferOffset + start, end - start, 0)
        }
        while end - start < wanted && !sourceAtEnd {
            let count = try source.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[end...]))
            if count == 0 { sourceAtEnd = true }
            end += count
        }
        return true
    }

    /// Consumes `count` bytes, reading and throwing away whatever part of them is not buffered yet.
    @usableFromInline
    func discard(_ count: Int) throws {
        if count <= end - start {
            start += count
            return
        }
        var left = count - (end - start)
        (bufferOffset, start, end) = (bufferOffset + end, 0, 0)
        while left > 0 {
            let read = try source.read(
                into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<min(left, buffer.count)]))
            if read == 0 {
                sourceAtEnd = true
                counters.drop(.truncatedRecord)
                return
            }
            left -= read
            bufferOffset += read
        }
    }
}
