public import SystemPackage

/// Collects output and writes it to a descriptor in large pieces: a replay prints a line per advert, and a
/// write(2) per line would cost more than decoding it.
public struct OutputBuffer {
    private let descriptor: FileDescriptor
    private var pending: [UInt8] = []
    private let flushThreshold = 64 * 1024

    public init(descriptor: FileDescriptor) {
        self.descriptor = descriptor
        pending.reserveCapacity(flushThreshold + 1024)
    }

    public mutating func write(_ text: String) throws {
        pending.append(contentsOf: text.utf8)
        if pending.count >= flushThreshold { try flush() }
    }

    /// Lets `append` write bytes straight into the buffer, with no `String` in between.
    public mutating func write(_ append: (inout [UInt8]) -> Void) throws {
        append(&pending)
        if pending.count >= flushThreshold { try flush() }
    }

    public mutating func flush() throws {
        guard !pending.isEmpty else { return }
        try pending.withUnsafeBytes { _ = try descriptor.writeAll($0) }
        pending.removeAll(keepingCapacity: true)
    }
}
