import CSystemShims

#if canImport(Glibc)
import Glibc
#endif

/// Room for a batch of packets read from one socket in one system call (recvmmsg), allocated once and reused:
/// the capture thread's reads cost one call per batch, not one per advert.
final class PacketBatch {
    /// The largest HCI event (255 bytes of parameters and its header) and a monitor header, rounded up.
    static let slot = 272
    let capacity: Int
    private let storage: UnsafeMutableRawBufferPointer
    private let lengths: UnsafeMutablePointer<UInt32>
    private(set) var count = 0

    init(capacity: Int = 64) {
        self.capacity = capacity
        storage = .allocate(byteCount: capacity * Self.slot, alignment: 8)
        lengths = .allocate(capacity: capacity)
    }

    deinit {
        storage.deallocate()
        lengths.deallocate()
    }

    /// Reads what waits on `descriptor`, up to the batch's capacity; the number read (0: nothing waited), or the
    /// errno of a failed read.
    func receive(from descriptor: Int32) -> Result<Int, Errno32> {
        let received = CSystemShims_receiveMany(
            descriptor, storage.baseAddress, UInt32(Self.slot), UInt32(capacity), lengths)
        guard received >= 0 else {
            count = 0
            return .failure(Errno32(errno))
        }
        count = Int(received)
        return .success(count)
    }

    /// The `index`th packet of the last batch (borrowed: valid until the next receive).
    subscript(index: Int) -> UnsafeRawBufferPointer {
        let start = storage.baseAddress! + index * Self.slot
        return UnsafeRawBufferPointer(start: start, count: min(Int(lengths[index]), Self.slot))
    }
}

/// An errno, as a value.
struct Errno32: Error {
    var code: Int32
    init(_ code: Int32) { self.code = code }
}
