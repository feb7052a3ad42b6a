import LockedValue
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A thread of its own for a loop that blocks in system calls (a capture source, a socket server, a network client), with the
/// two flags every such loop needs around it: stop was asked for (the loop checks it), and the thread is still
/// running (`waitUntilStopped` waits on it). A loop with its own way to be told to stop (MQTT's, woken through
/// libmosquitto) ignores the first and uses `join()`.
///
/// A POSIX thread rather than Foundation's `Thread`: that class is all the daemon used of full Foundation, which
/// brings its internationalisation data into the binary (docs/performance-history.md, "Package size").
public final class LoopThread: Sendable {
    private let stopFlag = Atomic<Bool>(false)
    private let runningFlag = Atomic<Bool>(false)
    /// The thread, until it is joined or detached.
    private let thread = LockedValue<pthread_t?>(nil)

    public init() {}

    deinit {
        // Ended, or ending (the last reference can be its own): nobody will join it.
        if let thread = thread.withLock({ $0 }) { pthread_detach(thread) }
    }

    /// Runs `body` on a new thread named `name` (at most 15 bytes are kept, the kernel's limit); returns at once.
    public func start(name: String, _ body: @escaping @Sendable () -> Void) {
        runningFlag.store(true, ordering: .releasing)
        let work = Unmanaged.passRetained(
            Work(name: name) { [self] in
                body()
                runningFlag.store(false, ordering: .releasing)
            })
        // Under the lock until the thread is recorded, so that a `join()` meanwhile waits for it rather than
        // returning as if there were none.
        thread.withLock { recorded in
            var thread = pthread_t()
            let created = pthread_create(
                &thread, nil,
                { context in
                    let work = Unmanaged<Work>.fromOpaque(context!).takeRetainedValue()
                    SystemExtras.setThreadName(work.name)
                    work.body()
                    return nil
                }, work.toOpaque())
            // Only a lack of memory or of threads (EAGAIN) makes this fail; the daemon cannot run without its loops.
            precondition(created == 0, "pthread_create failed: \(created)")
            if let earlier = recorded { pthread_detach(earlier) }  // started again: the last run ended already
            recorded = thread
        }
    }

    public func stop() { stopFlag.store(true, ordering: .relaxed) }

    public var stopRequested: Bool { stopFlag.load(ordering: .relaxed) }
    public var running: Bool { runningFlag.load(ordering: .acquiring) }

    /// Waits, without blocking a thread of the caller's, until the loop has returned.
    public func waitUntilStopped() async {
        while running { try? await Task.sleep(for: .milliseconds(10)) }
        join()  // the loop has returned: what is left of the thread is its last instructions
    }

    /// Blocks until the thread has ended; the loop must have been told to stop. On the thread itself (its loop let
    /// go of its owner, whose stop called this), it cannot wait for itself: it is detached, and ends when its loop
    /// returns. Without a thread (never started, or joined already), returns at once.
    public func join() {
        guard
            let thread = thread.withLock({ recorded in
                defer { recorded = nil }
                return recorded
            })
        else { return }
        if pthread_equal(thread, pthread_self()) != 0 { pthread_detach(thread) } else { pthread_join(thread, nil) }
    }

    /// What the new thread runs, handed over through pthread_create's one pointer.
    private final class Work {
        let name: String
        let body: () -> Void
        init(name: String, body: @escaping () -> Void) {
            self.name = name
            self.body = body
        }
    }
}
