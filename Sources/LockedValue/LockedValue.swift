import Glibc

/// A value behind a pthread mutex. Not Synchronization's `Mutex`: on Linux a contended one is handed over through the
/// kernel (FUTEX_LOCK_PI) in paths ThreadSanitizer does not instrument, so a race on the value behind it would pass
/// unseen; a pthread mutex it sees. Every lock of the station's that is not on NIO: the engine's set mailbox, which
/// takes the lock only if it is free (`MissingSetMailbox`), libmosquitto's network thread (`MQTTConnection`), the
/// daemon's status and services, the tests' helpers. Code on NIO uses NIOConcurrencyHelpers' NIOLockedValueBox, the
/// same lock.
public final class LockedValue<Value>: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private var value: Value

    public init(_ value: Value) {
        self.value = value
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }

    /// nil, at once, when another thread holds the lock.
    public func withLockIfAvailable<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result? {
        guard pthread_mutex_trylock(mutex) == 0 else { return nil }
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
