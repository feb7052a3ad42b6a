import BikeRegistryStore
import DaemonSupport
import NIOConcurrencyHelpers

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

    private let stopping = NIOLockedValueBox(false)
    private let asked = OnceAWhile<Answer>(interval: reuse)
    /// How long the database has to take the write.
    static let patience: Duration = .seconds(1)
    /// How long an answer is given again before the database is asked again.
    static let reuse: Duration = .seconds(1)

    public init() {}

    /// From now on the server is not ready, whatever its database says.
    public func stop() { stopping.withLockedValue { $0 = true } }

    func answer(_ database: any RegistryStore) async -> Answer {
        if stopping.withLockedValue({ $0 }) { return .stopping }
        let answer = await asked.value { await Self.ask(database) }
        return stopping.withLockedValue { $0 } ? .stopping : answer
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
