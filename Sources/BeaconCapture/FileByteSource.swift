public import BeaconWire
import SystemPackage

/// Reads a file through one descriptor, retrying interrupted reads. Owned by `CaptureFile`, which
/// closes the descriptor.
public struct FileByteSource: ByteSource {
    let descriptor: FileDescriptor

    public mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        try descriptor.read(into: buffer, retryOnInterrupt: true)
    }
}
