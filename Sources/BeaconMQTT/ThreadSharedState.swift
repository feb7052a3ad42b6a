#if canImport(Glibc)
import Glibc
#endif

/// A value shared with libmosquitto's network thread, behind a pthread mutex. Not Synchronization's `Mutex`: on
/// Linux a contended one is handed over through the kernel (FUTEX_LOCK_PI) in paths ThreadSanitizer does not see,
/// and libmosquitto's thread, which Swift's runtime knows nothing of, contends it at every acknowledgement
/// (.ci/tsan.supp says the same of the one place a `Mutex` is contended that hard).
final class ThreadSharedState<Value>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
