#if canImport(Glibc)
import Glibc
#endif

/// The one EINTR loop: runs a system call again while it fails with EINTR (a signal arrived before it did anything),
/// and returns its result otherwise, with `errno` as the call left it. Every wrapper in beacond goes through this, so
/// no call site writes its own retry check.
public func retryingOnInterrupt<Result: BinaryInteger>(_ call: () -> Result) -> Result {
    while true {
        let result = call()
        if result < 0 && errno == EINTR { continue }
        return result
    }
}
