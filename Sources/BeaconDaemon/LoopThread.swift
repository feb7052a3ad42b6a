import CSystemShims
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A thread of its own for a loop that blocks in system calls (a capture source, the control socket), with the
/// two flags every such loop needs around it: stop was asked for (the loop checks it), and the thread is still
/// running (`waitUntilStopped` waits on it).
///
/// A POSIX thread rather than Foundation's `Thread`: that class is all the daemon used of full Foundation, which
/// brings its internationalisation data into the binary (BENCHMARKS.md, "Package size").
final class LoopThread: Sendable {
    private let stopFlag = Atomic<Bool>(false)
    private let runningFlag = Atomic<Bool>(false)

    /// Runs `body` on a new, detached thread named `name` (at most 15 bytes are kept, the kernel's limit);
    /// returns at once.
    func start(name: String, _ body: @escaping @Sendable () -> Void) {
        runningFlag.store(true, ordering: .releasing)
        let work = Unmanaged.passRetained(
            Work(name: name) { [self] in
                body()
                runningFlag.store(false, ordering: .releasing)
            })
        var thread = pthread_t()
        let created = pthread_create(
            &thread, nil,
            { context in
                let work = Unmanaged<Work>.fromOpaque(context!).takeRetainedValue()
                _ = CSystemShims_setThreadName(String(work.name.utf8.prefix(15))!)
                work.body()
                return nil
            }, work.toOpaque())
        // Only a lack of memory or of threads (EAGAIN) makes this fail; the daemon cannot run without its loops.
        precondition(created == 0, "pthread_create failed: \(created)")
        pthread_detach(thread)
    }

    func stop() { stopFlag.store(true, ordering: .relaxed) }

    var stopRequested: Bool { stopFlag.load(ordering: .relaxed) }
    var running: Bool { runningFlag.load(ordering: .acquiring) }

    func waitUntilStopped() async {
        while running { try? await Task.sleep(for: .milliseconds(10)) }
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
