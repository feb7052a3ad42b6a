import CMallocCounter
import Foundation
import Synchronization

/// Seconds taken by `body`.
func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = ContinuousClock.now
    try body()
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

/// Resident set size now, from /proc/self/statm, in bytes.
func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    return fields.count > 1 ? (Int(fields[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE))) : 0
}

func allocations() -> UInt64 { beacond_allocation_count() }

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("EngineBenchmark: \(message)\n".utf8))
    exit(1)
}

func formatRate(_ count: Int, _ seconds: Double) -> String {
    String(format: "%8.1f ns/advert  %7.1f M/s", seconds * 1e9 / Double(count), Double(count) / seconds / 1e6)
}

/// A one-way flag between two threads.
final class ManagedAtomicFlag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .releasing) }
    var isSet: Bool { value.load(ordering: .acquiring) }
}
