import Glibc

/// A value behind a pthread mutex, with the one thing the engine needs beyond a lock: taking it only if it is free
/// (`MissingSetMailbox`). Not Synchronization.Mutex, whose contended hand-over goes through futexes ThreadSanitizer
/// does not instrument, so a race on the value behind it would pass unseen; a pthread mutex it sees.
final class TryLockedValue<Value: Sendable>: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private var value: Value

    init(_ value: Value) {
        self.value = value
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

    /// nil, at once, when another thread holds the lock.
    func withLockIfAvailable<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result? {
        guard pthread_mutex_trylock(mutex) == 0 else { return nil }
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
