import BikeRegistryStore
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

/// What the station routes read on every request, kept in memory so that answering a refresh touches no database:
/// the stations by their key's hash, and the missing list encoded once per version. A look at the versions every
/// `interval` (250 ms) reloads what moved, whoever moved it: this server, an operator's `station add` or `revoke`
/// beside it, or another server of the same PostgreSQL database. So a revoked key is refused within that interval,
/// a key just added is taken at once (a key not in memory is looked up), and a change this server makes to the list
/// is served at once (`listChanged`).
final class RegistrySnapshot: Service {
    /// The missing list as `GET /bikes` sends it, and the version it was read at (its ETag).
    struct List: Sendable {
        var version: Int64
        var body: ByteBuffer
    }

    private struct State {
        /// The versions the stations and the list below were read at; nil until first read.
        var versions: RegistryVersions?
        /// Every unrevoked station, by its key's hash.
        var stations: [String: Station] = [:]
        var list: List?
    }

    private let database: any RegistryStore
    private let interval: Duration
    private let logger: Logger
    private let encode: @Sendable ([MissingBike]) throws -> ByteBuffer
    private let state = Mutex(State())

    init(
        database: any RegistryStore, interval: Duration, logger: Logger,
        encode: @escaping @Sendable ([MissingBike]) throws -> ByteBuffer
    ) {
        self.database = database
        self.interval = interval
        self.logger = logger
        self.encode = encode
    }

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    try await self.refresh()
                } catch {
                    self.logger.error("cannot read the registry's versions: \(error)")
                }
                try? await Task.sleep(for: self.interval)
            }
        }
    }

    /// The unrevoked station with this key hash.
    func station(keyHash: String) async throws -> Station? {
        let (known, seen) = state.withLock { ($0.stations[keyHash], $0.versions?.stations) }
        if let known { return known }
        guard let station = try await database.station(keyHash: keyHash) else { return nil }
        // Kept only if no reload came between: one that did may have dropped it for a revocation read after it.
        state.withLock { state in
            if state.versions?.stations == seen, seen != nil { state.stations[keyHash] = station }
        }
        return station
    }

    /// The unrevoked station with this key hash if memory holds it; nil for a key to look up (`station(keyHash:)`).
    func heldStation(keyHash: String) -> Station? { state.withLock { $0.stations[keyHash] } }

    /// The list's current version if it has been read; nil before the first read.
    func heldListVersion() -> Int64? { state.withLock { $0.versions?.list } }

    /// The list's current version, for a conditional request.
    func listVersion() async throws -> Int64 {
        if let version = heldListVersion() { return version }
        try await refresh()
        return state.withLock { $0.versions?.list } ?? 0
    }

    /// The list at its current version, encoded once per version.
    func list() async throws -> List {
        let version = try await listVersion()
        if let list = state.withLock({ $0.list }), list.version >= version { return list }
        let (read, bikes) = try await database.missingBikes()
        let list = List(version: read, body: try encode(bikes))
        state.withLock { state in
            if (state.list?.version ?? .min) < read { state.list = list }
        }
        return list
    }

    /// This server changed the list: read the versions now rather than at the next look.
    func listChanged() async throws { try await refresh() }

    private func refresh() async throws {
        let versions = try await database.versions()
        let current = state.withLock { $0.versions }
        var stations: [String: Station]?
        if versions.stations != current?.stations {
            stations = Dictionary(
                try await database.stations().filter { $0.revokedAt == nil }.map { ($0.keyHash, $0) },
                uniquingKeysWith: { first, _ in first })
        }
        state.withLock { state in
            // A slower refresh that read older versions does not undo a newer one.
            if let stations, versions.stations >= (state.versions?.stations ?? .min) { state.stations = stations }
            state.versions = RegistryVersions(
                list: max(versions.list, state.versions?.list ?? .min),
                stations: max(versions.stations, state.versions?.stations ?? .min))
        }
    }
}
