import ArgumentParser
import BeaconCLI
import Dispatch

/// The entry point: the commands live in BeaconCLI, where tests can reach them.
///
/// A synchronous `main` that runs the command as a task and waits for it, not an `async` one: Swift's async `main`
/// hands the main thread to `dispatch_main`, which ends the thread with `pthread_exit`, and that unwinds its stack
/// through the binary's unwind tables. beacond unwinds nothing else, and that one unwinding made 0.7 MiB of the
/// tables and of libgcc's unwinder resident in every run (docs/performance-history.md, "RSS: what it took"). Nothing in beacond
/// runs on the main queue or the main actor, so the main thread has nothing else to do than wait.
@main
enum BeacondMain {
    static func main() {
        let finished = DispatchSemaphore(value: 0)
        Task.detached {
            await Beacond.main()
            finished.signal()
        }
        finished.wait()
    }
}
