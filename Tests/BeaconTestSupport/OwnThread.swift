import Foundation

/// Runs `body` on a thread of its own and awaits it. For a test's long blocking or CPU-bound work: Swift Testing
/// runs tests on the cooperative pool, one thread per core, and work that holds a pool thread for minutes holds up
/// every test waiting for that thread (CI's two cores, under a sanitizer).
public func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
