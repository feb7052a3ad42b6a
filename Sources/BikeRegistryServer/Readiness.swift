import BikeRegistryStore
import DaemonSupport
import Synchronization

/// Whether this server should be sent requests, as `GET /readyz` says to a load balancer: not once it is stopping
/// (`stop()`, on SIGTERM, before it drains), and not while its database does not take a write within a second.
/// The database is asked at most once a second however many balancers ask, and never by two requests at once: a
/// request in the second after an answer gets that answer, and one that comes while the database is being asked
/// waits for the same answer.
public final class Readiness: Sendable {
    /// Ready, or why not (the body of a 503).
    public enum Answer: Sendable, Equatable {
        case ready
        case stopping
        case databaseUnavailable
    }

    private struct State {
        var stopping = false
        var last: (answer: Answer, at: ContinuousClock.Instant)?
        var asking: Task<Answer, Never>?
    }
    private let state = Mutex(State())
    /// How long the database has to take the write.
    static let patience: Duration = .seconds(1)
    /// How long an answer is given again before the database is asked again.
    static let reuse: Duration = .seconds(1)

    public init() {}

    /// From now on the server is not ready, whatever its database says.
    public func stop() { state.withLock { $0.stopping = true } }

    func answer(_ database: any RegistryStore) async -> Answer {
        let now = ContinuousClock.now
        let asking = state.withLock { state -> Task<Answer, Never>? in
            if state.stopping { return nil }
            if let last = state.last, now - last.at < Self.reuse { return nil }
            if let asking = state.asking { return asking }
            let asking = Task { await Self.ask(database) }
            state.asking = asking
            return asking
        }
        guard let asking else { return state.withLock { $0.stopping ? .stopping : $0.last?.answer ?? .ready } }
        let answer = await asking.value
        return state.withLock { state in
            if state.asking == asking {
                state.asking = nil
                state.last = (answer, ContinuousClock.now)
            }
            return state.stopping ? .stopping : answer
        }
    }

    private static func ask(_ database: any RegistryStore) async -> Answer {
        do {
            try await withDeadline(patience) { try await database.takesAWrite() }
            return .ready
        } catch {
            return .databaseUnavailable
        }
    }
}
