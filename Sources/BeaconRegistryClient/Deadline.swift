import BeaconWire

/// A deadline for a whole exchange with the registry: connection, request, answer head and every byte of the body.
/// AsyncHTTPClient's own timeout ends at the answer's head, so a registry (or a proxy) that sends its headers and
/// then trickles the body a byte at a time would hold a request for ever; this cancels it instead.
struct DeadlineExceeded: Error {
    var timeout: Duration

    /// The deadline as a person reads it: "20 s", or "400 ms" for one that is not whole seconds.
    var timeoutText: String {
        let milliseconds = timeout.saturatingNanoseconds / 1_000_000
        return milliseconds % 1_000 == 0 ? "\(milliseconds / 1_000) s" : "\(milliseconds) ms"
    }
}

func withDeadline<T: Sendable>(_ timeout: Duration, _ operation: @escaping @Sendable () async throws -> T) async throws
    -> T
{
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(for: timeout)
            throw DeadlineExceeded(timeout: timeout)
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
}
