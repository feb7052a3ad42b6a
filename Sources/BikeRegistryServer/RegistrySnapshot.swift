import BikeRegistryCore
import BikeRegistryStore
import Foundation
import ListChanges
import Logging
import NIOConcurrencyHelpers
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
    /// The missing list as `GET /bikes` sends it, the version it was read at and, for a list with rotating bikes,
    /// the listing's start and end (`RotatingListing`): its ETag names both.
    struct List: Sendable {
        var version: Int64
        /// When the rotating bikes' identities began and stop being the current ones; nil for a list without any.
        var start: Int64?
        var end: Int64?
        /// Its ETag, made once with it: every refresh compares it (`StationRoutes.etag`).
        var etag: String
        var body: ByteBuffer
        /// The same body gzip-compressed, made with it, for the stations that ask for it (`Accept-Encoding`).
        var gzipped: ByteBuffer
        /// The listed rotating bikes by the identities listed for them (`RotatingListing.index`).
        var rotating: [UInt32: String] = [:]
        /// The entries the body lists, for the changes from an older list to this one (`ListHistory`).
        var entries: [ListedEntry] = []

        /// Whether this is the list at `version` for a request at `time`.
        func isCurrent(version: Int64, at time: @autoclosure () -> Int64) -> Bool {
            guard self.version >= version else { return false }
            guard let end else { return true }
            return time() < end
        }
    }

    /// The bikes read at one version, with their rotating beacons' keys opened: re-encoded as windows move, read
    /// again only when the version does.
    private struct Read: Sendable {
        var version: Int64
        var bikes: [MissingBike]
        var rotating: RotatingListing
    }

    /// What a request finds for the list it needs: held already, or being encoded.
    private enum Encoding {
        case held(List)
        case encoding(Task<List, any Error>)
    }

    private struct State {
        /// The versions the stations and the list below were read at; nil until first read.
        var versions: RegistryVersions?
        /// Every unrevoked station, by its key's hash.
        var stations: [String: Station] = [:]
        var list: List?
        var read: Read?
        /// The list being encoded, by its version and start: the requests that find it current wait for it rather
        /// than encode it again (a window's move reaches every refresh at once; 10,000 bikes are 170,000 HMACs).
        var encoding: (version: Int64, start: Int64?, task: Task<List, any Error>)?
    }

    private let database: any RegistryStore
    private let interval: Duration
    private let logger: Logger
    private let sealer: BeaconKeySealer?
    private let now: @Sendable () -> Date
    private let encode: @Sendable ([ListedEntry]) throws -> ByteBuffer
    /// The lists served lately, and the changes from each to the current one.
    let history: ListHistory
    private let events: RegistryEvents?
    private let state = NIOLockedValueBox(State())
    /// False only while the read held is of the current version and lists no rotating bike (set under `state`'s
    /// lock, with what it describes): then a sighting needs no verification, and a post takes no lock for it.
    private let mayListRotating = Atomic(true)

    init(
        database: any RegistryStore, interval: Duration, logger: Logger, sealer: BeaconKeySealer? = nil,
        now: @escaping @Sendable () -> Date = { Date() }, events: RegistryEvents? = nil,
        history: ListHistory = ListHistory(),
        encode: @escaping @Sendable ([ListedEntry]) throws -> ByteBuffer = StationList.encode
    ) {
        self.history = history
        self.events = events
        self.database = database
        self.interval = interval
        self.logger = logger
        self.sealer = sealer
        self.now = now
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
        let (known, seen) = state.withLockedValue { ($0.stations[keyHash], $0.versions?.stations) }
        if let known { return known }
        guard let station = try await database.station(keyHash: keyHash) else { return nil }
        // Kept only if no reload came between: one that did may have dropped it for a revocation read after it.
        state.withLockedValue { state in
            if state.versions?.stations == seen, seen != nil { state.stations[keyHash] = station }
        }
        return station
    }

    /// The unrevoked station with this key hash if memory holds it; nil for a key to look up (`station(keyHash:)`).
    func heldStation(keyHash: String) -> Station? { state.withLockedValue { $0.stations[keyHash] } }

    /// What the list held now weighs, for the metrics: its bytes as sent, and the rotating identities it lists.
    struct Held: Sendable {
        var bytes: Int
        var gzippedBytes: Int
        var identities: Int
    }

    /// The list held now, if one has been encoded.
    func held() -> Held? {
        state.withLockedValue { state in
            state.list.map {
                Held(
                    bytes: $0.body.readableBytes, gzippedBytes: $0.gzipped.readableBytes, identities: $0.rotating.count)
            }
        }
    }

    /// The list's current version if it has been read; nil before the first read.
    func heldListVersion() -> Int64? { state.withLockedValue { $0.versions?.list } }

    /// The list's current version, for a conditional request.
    func listVersion() async throws -> Int64 {
        if let version = heldListVersion() { return version }
        try await refresh()
        return state.withLockedValue { $0.versions?.list } ?? 0
    }

    /// The list to serve now if memory holds it for this moment, for a refresh answered from memory
    /// (`StationRoutes.heldNotModified`); nil when `list()` must be asked.
    func heldList() -> List? {
        state.withLockedValue { state in
            guard let version = state.versions?.list, let list = state.list,
                list.isCurrent(version: version, at: self.seconds())
            else { return nil }
            return list
        }
    }

    /// The list at its current version, encoded once per version and, with rotating bikes, once per window.
    func list() async throws -> List {
        let version = try await listVersion()
        let time = seconds()
        if let list = state.withLockedValue({ $0.list }), list.isCurrent(version: version, at: time) { return list }
        let read = try await self.read(version: version)
        // One start is one listing: no beacon's epoch changes between two times with the same start.
        let start = read.rotating.start(at: time)
        let found = state.withLockedValue { state -> Encoding in
            if let held = state.list, held.version == read.version, held.start == start { return .held(held) }
            if let encoding = state.encoding, encoding.version == read.version, encoding.start == start {
                return .encoding(encoding.task)
            }
            let task = Task { [encode, history] in
                let identities = read.rotating.identities(at: time)
                let entries = StationList.entries(read.bikes, identities: identities)
                let body = try encode(entries)
                let list = List(
                    version: read.version, start: start, end: read.rotating.end(at: time),
                    etag: StationRoutes.etag(read.version, start: start), body: body,
                    gzipped: try GzipBody.compress(body), rotating: RotatingListing.index(identities), entries: entries)
                history.hold(list)
                return list
            }
            state.encoding = (read.version, start, task)
            return .encoding(task)
        }
        let task: Task<List, any Error>
        switch found {
        case .held(let held): return held
        case .encoding(let encoding): task = encoding
        }
        let list: List
        do {
            list = try await task.value
        } catch {
            // A failed encoding is not kept: the next request tries again.
            state.withLockedValue { state in
                if state.encoding?.version == read.version, state.encoding?.start == start { state.encoding = nil }
            }
            throw error
        }
        state.withLockedValue { state in
            if state.encoding?.version == list.version, state.encoding?.start == list.start { state.encoding = nil }
            let held = state.list.map { ($0.version, $0.start ?? .min) } ?? (.min, .min)
            if held < (list.version, list.start ?? .min) { state.list = list }
        }
        return list
    }

    /// The rotating beacon (its id) of the missing bike the current list gives this identity; nil when none does.
    /// What a finder's lookup of an identity heard now reads: a rotating beacon is recognised while its bike is
    /// missing, which is when stations follow it.
    func rotatingBeacon(uuid: String, major: Int, minor: Int) async throws -> String? {
        // The listing first: a registry listing no rotating bike answers from memory, without the list.
        let listing = try await rotatingListing()
        guard !listing.beacons.isEmpty, let major = UInt16(exactly: major), let minor = UInt16(exactly: minor),
            let bike = try await list().rotating[RotatingListing.indexKey(major: major, minor: minor)],
            let beacon = listing.beacons[bike], beacon.uuid == uuid.uppercased()
        else { return nil }
        return beacon.id
    }

    /// The current list's missing rotating bikes, their keys opened: what a sighting is verified against.
    func rotatingListing() async throws -> RotatingListing {
        guard mayListRotating.load(ordering: .acquiring) else { return RotatingListing([], sealer: nil) }
        let held = state.withLockedValue { state -> RotatingListing? in
            guard let version = state.versions?.list, let read = state.read, read.version >= version else { return nil }
            return read.rotating
        }
        if let held { return held }
        return try await read(version: try await listVersion()).rotating
    }

    private func read(version: Int64) async throws -> Read {
        if let read = state.withLockedValue({ $0.read }), read.version >= version { return read }
        let (at, bikes) = try await database.missingBikes()
        let read = Read(version: at, bikes: bikes, rotating: RotatingListing(bikes, sealer: sealer))
        if !read.rotating.unopened.isEmpty {
            logger.error(
                "\(read.rotating.unopened.count) missing bikes' rotating beacons are not listed, and their sightings stay unverified: \(sealer == nil ? "serve has no --key-file (or credential beacon-key) to open their keys" : "their keys do not open with this --key-file")"
            )
        }
        state.withLockedValue { state in
            guard (state.read?.version ?? .min) < at else { return }
            state.read = read
            let listsNone = read.rotating.beacons.isEmpty && at >= (state.versions?.list ?? .max)
            mayListRotating.store(!listsNone, ordering: .releasing)
        }
        return read
    }

    private func seconds() -> Int64 { Int64(now().timeIntervalSince1970.rounded(.down)) }

    /// This server changed the list: read the versions now rather than at the next look.
    func listChanged() async throws { try await refresh() }

    private func refresh() async throws {
        let versions = try await database.versions()
        let current = state.withLockedValue { $0.versions }
        var stations: [String: Station]?
        if versions.stations != current?.stations {
            stations = Dictionary(
                try await database.stations().filter { $0.revokedAt == nil }.map { ($0.keyHash, $0) },
                uniquingKeysWith: { first, _ in first })
        }
        state.withLockedValue { state in
            // A slower refresh that read older versions does not undo a newer one.
            if let stations, versions.stations >= (state.versions?.stations ?? .min) { state.stations = stations }
            // A new version may list rotating bikes until it is read.
            if versions.list > (state.versions?.list ?? .min) { mayListRotating.store(true, ordering: .releasing) }
            state.versions = RegistryVersions(
                list: max(versions.list, state.versions?.list ?? .min),
                stations: max(versions.stations, state.versions?.stations ?? .min))
        }
        events?.listHeld(versions.list)
    }
}
