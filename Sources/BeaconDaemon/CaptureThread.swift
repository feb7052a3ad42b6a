import Foundation
import Synchronization

/// The thread a capture source produces on, with the two flags every source needs around it: stop was
/// asked for (the thread checks it), and the thread is still running (`waitUntilStopped` waits on it).
final class CaptureThread: Sendable {
    private let stopFlag = Atomic<Bool>(false)
    private let runningFlag = Atomic<Bool>(false)

    /// Runs `body` on a new thread named `name`; returns at once.
    func start(name: String, _ body: @escaping @Sendable () -> Void) {
        runningFlag.store(true, ordering: .releasing)
        let thread = Thread { [self] in
            body()
            runningFlag.store(false, ordering: .releasing)
        }
        thread.name = name
        thread.start()
    }

    func stop() { stopFlag.store(true, ordering: .relaxed) }

    var stopRequested: Bool { stopFlag.load(ordering: .relaxed) }
    var running: Bool { runningFlag.load(ordering: .acquiring) }

    func waitUntilStopped() async {
        while running { try? await Task.sleep(for: .milliseconds(10)) }
    }
}
