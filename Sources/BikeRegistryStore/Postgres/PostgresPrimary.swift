import BikeRegistryCore
import DaemonSupport
import Logging
import NIOConcurrencyHelpers
import PostgresNIO

/// The host among the URL's that the store's operations go to, and its pool, followed when it changes: postgres-nio's
/// pool knows one host and keeps a connection to a demoted primary (its keep-alive succeeds on a standby), so the
/// store watches what its operations' failures say. One that suggests the host lost the primary (`PrimaryLoss`)
/// starts a search: every host asked at once what it is (`PrimaryProbe`), again and again with a backoff up to a
/// second, until one will do (`target_session_attrs`). A different host, or the same after a round in which none
/// would, gets a new pool and the old one is closed, so no operation waits on connections to a host that hung. While
/// a round has found none, operations fail at once (a 503 with `Retry-After`) rather than wait out their deadline.
/// Each change is logged once.
final class PostgresPrimary: Sendable {
    let location: PostgresLocation
    let deadline: Duration
    private let configurations: [PostgresClient.Configuration]
    private let logger: Logger
    private let measure: StoreMeasure

    private struct Current {
        var host: Int
        var client: PostgresClient
        var running: Task<Void, Never>
    }
    private struct State {
        var current: Current
        var search: Task<Void, Never>?
        /// The latest round of a search found no host that will do.
        var noneFound = false
        /// Pools of hosts left, closing.
        var retired: [Task<Void, Never>] = []
        var closed = false
    }
    private let state: NIOLockedValueBox<State>

    /// The first host, in the URL's order, that answers and will do, with its schema brought up to date
    /// (`PostgresMigrator`) on a connection of its own, which fails at once where the pool would keep trying.
    static func open(
        _ location: PostgresLocation, connections: Int, deadline: Duration, observer: (any StoreObserver)?,
        logger: Logger
    ) async throws(RegistryStoreError) -> PostgresPrimary {
        var configurations: [PostgresClient.Configuration] = []
        for endpoint in location.endpoints {
            var configuration = try location.configuration(for: endpoint)
            configuration.options.maximumConnections = max(2, connections)
            configurations.append(configuration)
        }
        var refusals: [String] = []
        for (index, endpoint) in location.endpoints.enumerated() {
            do {
                if try await PrimaryProbe.migrateIfItWillDo(endpoint, of: location, logger: logger) {
                    return PostgresPrimary(
                        location: location, configurations: configurations, host: index, deadline: deadline,
                        measure: StoreMeasure(observer: observer), logger: logger)
                }
                refusals.append(PrimaryProbe.refusal(endpoint, of: location))
            } catch {
                let host = location.endpoints.count > 1 ? "\(PostgresLocation.describe(endpoint)): " : ""
                refusals.append(host + PostgresFailure.describe(error))
            }
        }
        throw RegistryStoreError(
            "cannot open the registry database \(location): \(refusals.joined(separator: "; "))")
    }

    private init(
        location: PostgresLocation, configurations: [PostgresClient.Configuration], host: Int, deadline: Duration,
        measure: StoreMeasure, logger: Logger
    ) {
        self.measure = measure
        self.location = location
        self.configurations = configurations
        self.deadline = deadline
        self.logger = logger
        state = NIOLockedValueBox(State(current: Self.start(configurations[host], host: host, logger: logger)))
    }

    private static func start(_ configuration: PostgresClient.Configuration, host: Int, logger: Logger) -> Current {
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        return Current(host: host, client: client, running: Task { await client.run() })
    }

    /// The host operations go to now, as the URL names it.
    var host: String { PostgresLocation.describe(location.endpoints[state.withLockedValue { $0.current.host }]) }

    /// The operation on the current host's pool within the store's deadline, its failure said for an operator (never
    /// the query's values) and, where it suggests the primary was lost, a search begun; measured as `kind` for the
    /// store's observer, its failure's kind read from the error as it came.
    func run<Value: Sendable>(
        _ kind: StoreOperation, _ operation: @escaping @Sendable (PostgresClient) async throws -> Value
    ) async throws -> Value {
        do {
            return try await measure.run(kind, classify: { ($0 as? MeasuredFailure)?.failure }) {
                try await attempt(operation)
            }
        } catch let error as MeasuredFailure {
            throw error.error
        }
    }

    private func attempt<Value: Sendable>(_ operation: @escaping @Sendable (PostgresClient) async throws -> Value)
        async throws -> Value
    {
        let (client, noneFound) = state.withLockedValue { ($0.current.client, $0.noneFound) }
        if noneFound {
            throw MeasuredFailure(
                .unavailable, RegistryStoreError("no PostgreSQL host takes the registry's writes now"))
        }
        do {
            return try await withDeadline(deadline) {
                do {
                    return try await operation(client)
                } catch {
                    if PrimaryLoss.suspected(error) { self.lost(client, because: error) }
                    throw MeasuredFailure(
                        PostgresFailure.kind(error), RegistryStoreError(PostgresFailure.describe(error)))
                }
            }
        } catch let error as DeadlineExceeded {
            lost(client, because: error)
            throw MeasuredFailure(
                .timeout, RegistryStoreError("PostgreSQL did not answer within \(deadline.components.seconds) s"))
        }
    }

    /// Begins a search, unless one is on or `client` is a pool already left.
    private func lost(_ client: PostgresClient, because error: any Error) {
        let from = state.withLockedValue { state -> Int? in
            guard !state.closed, state.search == nil, state.current.client === client else { return nil }
            state.search = Task { await self.search() }
            return state.current.host
        }
        guard let from, location.endpoints.count > 1 || !(error is DeadlineExceeded) else { return }
        let host = PostgresLocation.describe(location.endpoints[from])
        logger.warning(
            "PostgreSQL at \(host) may no longer take writes; asking every host",
            metadata: ["error": "\(PostgresFailure.describe(error))"])
    }

    private func search() async {
        var pause = Duration.milliseconds(100)
        var saidNone = false
        while !Task.isCancelled {
            let (found, refusals) = await PrimaryProbe.first(of: location, logger: logger)
            if let found {
                adopt(found)
                return
            }
            state.withLockedValue { $0.noneFound = true }
            if !saidNone {
                saidNone = true
                logger.error(
                    "no PostgreSQL host takes writes; asking again every second",
                    metadata: ["hosts": "\(refusals.joined(separator: "; "))"])
            }
            try? await Task.sleep(for: pause)
            pause = min(pause * 2, .seconds(1))
        }
    }

    /// Operations go to `host` from now: on the pool they went to if it is the same host and no round found it
    /// wanting, else on a new pool, the old one closed.
    private func adopt(_ host: Int) {
        let (changed, from) = state.withLockedValue { state -> (Bool, Int) in
            let from = state.current.host
            defer {
                state.search = nil
                state.noneFound = false
            }
            guard !state.closed, host != from || state.noneFound else { return (false, from) }
            state.current.running.cancel()
            state.retired.append(state.current.running)
            state.current = Self.start(configurations[host], host: host, logger: logger)
            return (true, from)
        }
        guard changed else { return }
        let now = PostgresLocation.describe(location.endpoints[host])
        if host == from {
            logger.notice("PostgreSQL's primary is \(now) again")
        } else {
            logger.notice(
                "PostgreSQL's primary is now \(now)",
                metadata: ["was": "\(PostgresLocation.describe(location.endpoints[from]))"])
        }
    }

    /// Stops any search and closes every pool; one left behind that does not close within the deadline is let be.
    func close() async {
        let (search, pools) = state.withLockedValue { state in
            state.closed = true
            state.current.running.cancel()
            return (state.search, state.retired + [state.current.running])
        }
        search?.cancel()
        await search?.value
        _ = try? await withDeadline(deadline) {
            for pool in pools { await pool.value }
        }
    }
}

/// An operation's failure as the store says it, with the kind its observer counts (nil: the store's own refusal).
/// It goes no further than `PostgresPrimary.run`, which throws the error alone.
private struct MeasuredFailure: Error {
    let failure: StoreFailure?
    let error: RegistryStoreError

    init(_ failure: StoreFailure?, _ error: RegistryStoreError) {
        self.failure = failure
        self.error = error
    }
}
