import BeaconPOSIX
public import BeaconWire
import SystemPackage

/// Why a capture file cannot be replayed, worded for the one line a user sees.
public struct CaptureFileError: Error, CustomStringConvertible {
    public var path: String
    public var reason: String

    public var description: String { "\(path): \(reason)" }
}

/// A capture file opened for streaming: the format is known once it is open, records come out one by one.
public final class CaptureFile {
    public let path: String
    private let descriptor: FileDescriptor
    @usableFromInline let stream: CaptureStream<FileByteSource>

    public var format: CaptureFormat { stream.format }
    /// Container-level drops (truncation, corrupt headers, unreadable lines) so far.
    public var counters: DecodeCounters { stream.counters }

    public init(path: String, bufferCapacity: Int = CaptureStream<FileByteSource>.defaultCapacity)
        throws(CaptureFileError)
    {
        self.path = path
        do {
            descriptor = try FileDescriptor.open(FilePath(path), .readOnly, options: [.closeOnExec])
        } catch {
            throw CaptureFileError(path: path, reason: FileReadError.describe(error))
        }
        do {
            stream = try CaptureStream(source: FileByteSource(descriptor: descriptor), capacity: bufferCapacity)
        } catch {
            try? descriptor.close()
            switch error {
            case .empty: throw CaptureFileError(path: path, reason: "the file is empty")
            case .unknownFormat(let firstBytes):
                throw CaptureFileError(
                    path: path,
                    reason:
                        "not a capture beacond can read (first bytes \(firstBytes); expected pcap, pcapng, btsnoop or hex text)"
                )
            case .read(let cause): throw CaptureFileError(path: path, reason: FileReadError.describe(cause))
            }
        }
    }

    deinit { try? descriptor.close() }

    /// Streams every record; see `CaptureStream.forEachRecord`. A read error mid-file is thrown as a
    /// `CaptureFileError`; whatever `body` throws is passed through.
    @inlinable
    public func forEachRecord(_ body: (CaptureRecord, RecordPosition) throws -> Void) throws {
        do {
            try stream.forEachRecord(body)
        } catch {
            throw readError(error)
        }
    }

    /// A read error (`Errno`) worded as a `CaptureFileError`; anything else (what `body` threw) unchanged.
    @usableFromInline
    func readError(_ error: any Error) -> any Error {
        guard let errno = error as? Errno else { return error }
        return CaptureFileError(path: path, reason: FileReadError.describe(errno))
    }
}
