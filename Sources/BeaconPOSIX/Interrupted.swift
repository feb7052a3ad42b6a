#if canImport(Glibc)
import Glibc
#endif

/// beacond's two ways with EINTR (a signal arrived before a system call did anything). Every call that can be
/// interrupted goes through one of them, so no call site writes its own check.

/// Runs a system call again while it fails with EINTR, and returns its result otherwise, with `errno` as the call
/// left it.
public func retryingOnInterrupt<Result: BinaryInteger>(_ call: () -> Result) -> Result {
    while true {
        let result = call()
        if result < 0 && errno == EINTR { continue }
        return result
    }
}

/// For a wait in a loop that looks at its flags each time round (poll(2) with a timeout, a read that may find
/// nothing): EINTR is "nothing yet", 0, so a signal wakes the loop to look rather than starting the wait again
/// with its whole timeout. Any other result, and `errno`, as the call left them.
public func interruptIsNothing<Result: BinaryInteger>(_ call: () -> Result) -> Result {
    let result = call()
    return result < 0 && errno == EINTR ? 0 : result
}
