import LockedValue

/// A deadline for a whole exchange: connection, request, answer head and every byte of the body. AsyncHTTPClient's
/// own timeout ends at the answer's head, so a peer that sends its headers and then trickles the body a byte at a
/// time would hold a request for ever; PostgreSQL's pool waits as long as the database is away. beacond's registry
/// client, bike-registry's deliveries to owners and its PostgreSQL store all bound their waits with this.
public struct DeadlineExceeded: Error, CustomStringConvertible {
    public var timeout: Duration

    public init(timeout: Duration) { self.timeout = timeout }

    /// The deadline as a person reads it: "20 s", or "400 ms" for one that is not whole seconds.
    public var timeoutText: String {
        let (seconds, attoseconds) = timeout.components
        let milliseconds = seconds * 1_000 + attoseconds / 1_000_000_000_000_000
        return milliseconds % 1_000 == 0 ? "\(milliseconds / 1_000) s" : "\(milliseconds) ms"
    }

    public var description: String { "no whole answer within \(timeoutText)" }
}

/// The operation's result, or `DeadlineExceeded` once `timeout` has passed, whichever comes first. Not a task
/// group, which would wait for its cancelled child: an operation stuck on a connection (or in a resolver) may
/// answer cancellation late, and the caller is answered at the deadline all the same while the operation,
/// cancelled, ends on its own. Cancelling the caller cancels the operation.
public func withDeadline<T: Sendable>(_ timeout: Duration, _ operation: @escaping @Sendable () async throws -> T)
    async throws -> T
{
    let first = FirstAnswer<T>()
    let running = Task {
        do {
            first.give(.success(try await operation()))
        } catch {
            first.give(.failure(error))
        }
    }
    let timer = Task {
        try await Task.sleep(for: timeout)
        // The answer first, then the cancellation: cancelled first, the operation could answer before this with the
        // CancellationError it was given, and a deadline passed would read as "connection failed" (seen under load).
        first.give(.failure(DeadlineExceeded(timeout: timeout)))
        running.cancel()
    }
    defer { timer.cancel() }
    return try await withTaskCancellationHandler {
        try await first.wait()
    } onCancel: {
        running.cancel()
    }
}

/// The first of several answers to one question; the others are dropped.
private final class FirstAnswer<Value: Sendable>: Sendable {
    private enum State {
        case empty
        case waiting(CheckedContinuation<Value, any Error>)
        case answered(Result<Value, any Error>)
        case done
    }

    private let state = LockedValue(State.empty)

    func give(_ result: Result<Value, any Error>) {
        let waiting = state.withLock { state -> CheckedContinuation<Value, any Error>? in
            switch state {
            case .empty:
                state = .answered(result)
                return nil
            case .waiting(let continuation):
                state = .done
                return continuation
            case .answered, .done:
                return nil
            }
        }
        waiting?.resume(with: result)
    }

    func wait() async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            let early = state.withLock { state -> Result<Value, any Error>? in
                if case .answered(let result) = state {
                    state = .done
                    return result
                }
                state = .waiting(continuation)
                return nil
            }
            if let early { continuation.resume(with: early) }
        }
    }
}
