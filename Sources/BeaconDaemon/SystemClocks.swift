public import BeaconDelivery
import BeaconPOSIX

#if canImport(Glibc)
import Glibc
#endif

/// The system's clocks read together, for labelling sightings (`SightingClock`): the wall and monotonic clocks,
/// whether the wall clock is synchronised, and which boot the monotonic clock belongs to.
public struct SystemClocks: Sendable {
    public let bootID: String
    private let clock: StationClock

    /// The boot's id: the kernel's (`/proc/sys/kernel/random/boot_id`), or, where /proc shows only processes (the
    /// unit's ProcSubset=pid), one kept in `runtimeDirectory`, which lasts exactly as long as the boot (/run is a
    /// tmpfs; the unit keeps its directory across stops with RuntimeDirectoryPreserve=yes).
    public init(runtimeDirectory: String, clock: StationClock = .system) {
        self.clock = clock
        bootID = Self.kernelBootID() ?? Self.runtimeBootID(in: runtimeDirectory) ?? "unknown"
    }

    public func reading() -> ClockReading {
        let monotonic = clock.monotonicNanoseconds()
        return ClockReading(
            wall: clock.wallNanoseconds(), monotonic: monotonic,
            synchronized: ClockSynchronization.read().isSynchronized, bootID: bootID)
    }

    static func kernelBootID() -> String? {
        guard let bytes = try? WholeFile.read(path: "/proc/sys/kernel/random/boot_id", limit: 64) else { return nil }
        let text = String(decoding: bytes, as: UTF8.self).filter { !$0.isWhitespace }
        return text.isEmpty ? nil : text
    }

    static func runtimeBootID(in directory: String) -> String? {
        let path = directory + "/boot-id"
        if let bytes = try? WholeFile.read(path: path, limit: 64), !bytes.isEmpty {
            return String(decoding: bytes, as: UTF8.self)
        }
        var random = SystemRandomNumberGenerator()
        let id = (0..<4).map { _ in String(random.next() as UInt32, radix: 16) }.joined(separator: "-")
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        let written = retryingOnInterrupt {
            Array(id.utf8).withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        }
        return written == id.utf8.count ? id : nil
    }
}
