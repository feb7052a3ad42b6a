/// What a framer found at the front of the bytes it was shown.
public enum FrameStep {
    /// A record whose payload lies inside the window; `consumed` bytes are done with.
    case record(CaptureRecord, consumed: Int)
    /// Bytes that hold no record (file header, interface description, comment line). `consumed` may
    /// exceed the window: the reader then discards the rest from its source without buffering it.
    case skipped(consumed: Int)
    /// A record that could not be read. It still counts as a record (it has a frame number).
    /// `consumed` may exceed the window, as for `.skipped`.
    case dropped(DropReason, consumed: Int)
    /// The window must hold at least this many bytes before the framer can go on.
    case needMore(Int)
    /// The file cannot be read past this point (an impossible header); the reason is counted once.
    case corrupt(DropReason)
}

/// Splits one capture container into records, without I/O: the reader shows it a window of bytes that
/// starts where the previous step ended, and it answers with one `FrameStep`.
///
/// The window is mutable so that the hex-text framer can decode a line into the bytes it has already
/// read instead of allocating. Binary framers only read it.
public protocol CaptureFramer {
    /// `atEnd` is true when the window holds everything that is left of the file.
    mutating func next(_ window: UnsafeMutableRawBufferPointer, atEnd: Bool) -> FrameStep
}

/// The largest record beacond will buffer. An HCI packet is at most 64 KiB plus headers; pcap's
/// customary snapshot length is 256 KiB. Anything longer is a corrupt length field, not a packet.
public let maxCaptureRecordLength = 262_144
