import Foundation

/// Runs an async body to its end on the thread that calls `run`, which waits for it: how a transaction written once
/// for both databases, in async code, runs inside GRDB's write, whose `Database` may be used only on GRDB's own
/// thread and only until its closure returns.
///
/// The body runs in a task that prefers this executor (SE-0417), so each of its nonisolated parts runs here, on the
/// waiting thread: the SQLite connection's statements, which never suspend, run where GRDB allows them. Should the body
/// await something elsewhere, the thread waits for it to come back and runs the rest; nothing else is ever run here.
/// A body must not ask the database for an access of its own: the writer it would wait for is the one it holds.
/// Jobs are handed over under an `NSCondition` (a pthread mutex and condition, which ThreadSanitizer follows).
final class CallingThreadExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    /// Guarded by `condition`.
    private var jobs: [UnownedJob] = []
    private var finished = false

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// `body`'s result, once it has run here to its end.
    static func run<Result: Sendable>(_ body: sending @escaping () async throws -> Result) throws -> Result {
        let executor = CallingThreadExecutor()
        let outcome = Outcome<Result>()
        Task(executorPreference: executor) {
            let result: Swift.Result<Result, any Error>
            do { result = .success(try await body()) } catch { result = .failure(error) }
            outcome.value = result
            executor.finish()
        }
        executor.drain()
        return try outcome.value!.get()
    }

    private func finish() {
        condition.lock()
        finished = true
        condition.signal()
        condition.unlock()
    }

    /// Runs the body's jobs as they come, until it has finished.
    private func drain() {
        while true {
            condition.lock()
            while jobs.isEmpty && !finished { condition.wait() }
            if jobs.isEmpty {
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }

    /// The body's result, written by its task before `finish` and read by `run` after `drain`, which the condition
    /// orders.
    private final class Outcome<Value>: @unchecked Sendable {
        var value: Swift.Result<Value, any Error>?
    }
}
