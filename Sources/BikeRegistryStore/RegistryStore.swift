public import BikeRegistryCore
public import Foundation
public import Logging

/// bike-registry's storage: stations, bikes, sightings and the notifications owed to owners. Two implementations run
/// the same schema (`RegistrySchema`) and the same tests: `SQLiteRegistryStore`, one file beside one server, and
/// `PostgresRegistryStore`, one database behind any number of servers. `RegistryStores.open` picks by the location.
///
/// Every write that must not be lost (a sighting and the notifications it causes) is one transaction, committed
/// before the station is answered. Keys and tokens are looked up by their hash (`Secrets`); none is stored in clear.
public protocol RegistryStore: Sendable {
    /// Where the data is, as an operator may read it (a PostgreSQL password is left out).
    var location: String { get }
    /// The PostgreSQL host (`HOST:PORT`, or a socket's path) operations go to now, which moves with a failover; nil
    /// for a SQLite file.
    var primaryHost: String? { get }

    // MARK: Stations

    /// Adds a station and returns its key, which is stored only as a hash.
    func addStation(name: String, latitude: Double, longitude: Double, now: Date) async throws -> String
    func stations() async throws -> [Station]
    /// Revokes the station's key; its sightings stay. False when no unrevoked station has that name.
    func revokeStation(name: String, now: Date) async throws -> Bool
    /// The station whose key has this hash (`Secrets.hash`), unless revoked.
    func station(keyHash: String) async throws -> Station?
    /// Notes each station's latest refresh (the server gathers them rather than write on every request).
    func recordRefreshes(_ refreshes: [Int64: StationRefresh]) async throws
    /// How many stations refreshed since `date`: the stations that were listening.
    func stationsRefreshed(since date: Date) async throws -> Int

    // MARK: Bikes

    /// Registers a bike by the beacon the owner typed (open registration, and the tests): `.beaconTaken` when a
    /// bike holds it or it is a provisioned beacon, which only its code claims.
    func register(_ new: NewBike, now: Date) async throws -> RegisterOutcome
    /// The bike, when `ownerToken` is its owner's; nil for any other token or id alike, so a guess learns nothing.
    func bike(id: String, ownerToken: String) async throws -> Bike?
    /// Applies the owner's change, its report's under `rules` at `now`, in one transaction: all of it, or (refused)
    /// none.
    func update(id: String, ownerToken: String, _ change: BikeChange, rules: MissingReportRules, now: Date)
        async throws -> BikeUpdate
    /// Replaces the owner token with a new one, returned once; the old token opens nothing afterwards. Nil when the
    /// token is not this bike's owner's.
    func rotateOwnerToken(id: String, ownerToken: String) async throws -> String?
    /// Deletes the bike, its sightings, its targets and the notifications still owed for it, its report withdrawn at
    /// `now`. False when the token is not its owner's.
    func delete(id: String, ownerToken: String, now: Date) async throws -> Bool
    /// The missing bikes and the list's version (its ETag), read together.
    func missingBikes() async throws -> (version: Int64, bikes: [MissingBike])
    /// The versions of the missing list and of the stations, read together: each moves with every change.
    func versions() async throws -> RegistryVersions
    /// Whether `token` is any bike's owner token.
    func isOwnerToken(_ token: String) async throws -> Bool

    // MARK: Owners' e-mail

    /// Sets the bike's address (nil removes it) for its owner, in one transaction. A new address, or one not yet
    /// confirmed given again, is unconfirmed and owes one confirmation message, within `limits`; whatever was still
    /// owed to the old address is abandoned.
    func changeEmail(id: String, ownerToken: String, to address: String?, limits: EmailLimits, now: Date)
        async throws -> EmailChange
    /// Confirms the address whose confirmation code this is, if it has not expired by `now`. False otherwise.
    func confirmEmail(code: String, now: Date) async throws -> Bool
    /// Removes the address whose unsubscribe key this is (RFC 8058's one click, with no owner token), and abandons
    /// whatever was still owed to it. False when no address has that key.
    func unsubscribeEmail(key: String, now: Date) async throws -> Bool
    /// How many addresses there are, by state: the operator's figures, never the addresses.
    func emailCounts() async throws -> EmailCounts
    /// The bike, by id alone: for the mail worker, which needs its description and its address's unsubscribe key.
    func bike(id: String) async throws -> Bike?
    /// The bike whose address's unsubscribe key this is: its messages' link to its sightings.
    func bike(unsubscribeKey: String) async throws -> Bike?

    // MARK: Provisioned beacons (claim codes)

    /// Issues one beacon per code hash in the region (`uuid`, `major`), at the lowest minors from `firstMinor` that
    /// no bike and no beacon holds, and returns their minors in order. All or none: throws when too few are free.
    func issueBeacons(uuid: String, major: Int, firstMinor: Int, codeHashes: [String], now: Date) async throws
        -> [Int]
    /// Adds beacons programmed elsewhere, all or none: throws naming the first whose identity is a beacon's or a
    /// bike's already, or whose code is another beacon's.
    func importBeacons(_ beacons: [NewBeacon], now: Date) async throws
    /// Every provisioned beacon, and every bike registered without one (claimed, with no code), by identity.
    func beacons() async throws -> [ProvisionedBeacon]
    /// Withdraws the beacon: its code claims nothing from now on. A bike registered with it stays. False when no
    /// unrevoked beacon has that identity.
    func revokeBeacon(uuid: String, major: Int, minor: Int, now: Date) async throws -> Bool
    /// Adds rotating beacons (issued, or imported with their keys), all or none: throws naming the first whose id is
    /// taken or whose code is another beacon's, fixed or rotating.
    func addRotatingBeacons(_ beacons: [NewRotatingBeacon], now: Date) async throws
    /// Every rotating beacon, by region and id; never a key.
    func rotatingBeacons() async throws -> [ProvisionedRotatingBeacon]
    /// Makes the rotating beacon's code claim nothing from now on; a bike registered with it stays. False when
    /// there is no such beacon, or it is revoked already.
    func revokeRotatingBeacon(id: String, now: Date) async throws -> Bool
    /// Moves a rotating beacon's learned clock offset (`RotatingWindow.learn`) to `offset` seconds, by its bike;
    /// the missing list's version moves with it when the bike is missing, since its window has moved. False when it
    /// was that already, or the bike has no rotating beacon.
    func learnClockOffset(bikeId: String, offset: Int64) async throws -> Bool
    /// Registers a bike on the beacon, fixed or rotating, whose code has this hash (`ClaimCode.hash`) if that beacon
    /// is issued, not revoked, held by no bike and matches what the owner gave; `.claimRefused` otherwise, whichever
    /// it is.
    func claim(codeHash: String, matching: BeaconMatch, bike: BikeDescription, now: Date) async throws
        -> RegisterOutcome

    // MARK: Missing reports

    /// The bike's open report, if it has one.
    func openReport(bikeId: String) async throws -> MissingReport?
    /// Sets when upgraded reports lapse, reminds the owners of reports that lapse within `rules.reminder` (once a
    /// renewal) and closes those that have lapsed, each with its message to the owner, as of `now`.
    func sweepReports(rules: MissingReportRules, now: Date) async throws -> ReportSweep
    /// The operator's figures, as of `now`.
    func reportStats(now: Date) async throws -> ReportStats

    // MARK: Found beacons

    /// Whether a bike is registered with the beacon, and missing: all a finder learns.
    func lookupBeacon(uuid: String, major: Int, minor: Int) async throws -> BeaconLookup
    /// Keeps a finder's report that the beacon was placed on them, pauses its bike's messages (abandoning those still
    /// owed) and, if this paused it, owes its owner one `bike.paused`; one transaction.
    func reportAbuse(uuid: String, major: Int, minor: Int, message: String?, now: Date) async throws -> AbuseOutcome
    /// Every finder's report, newest first.
    func abuseReports() async throws -> [AbuseReport]
    /// Ends the report and every other open one of its bike: `.restored` resumes the bike's messages, `.removed`
    /// deletes the bike and revokes its beacon. False when no open report has that id.
    func resolveAbuse(id: String, _ resolution: AbuseReport.Resolution, now: Date) async throws -> Bool

    // MARK: Sightings

    /// Stores the sighting and, for a missing bike, the notifications its visit now owes (`VisitNotifications`), in
    /// one transaction: once this returns, the station may be told 2xx. A repeat of a stored sightingId changes nothing.
    func record(_ sighting: SightingReport, from station: Station, now: Date) async throws -> RecordOutcome
    /// The bike's sightings, newest first (at most `limit`), with each station's name and place.
    func sightings(bikeId: String, limit: Int) async throws -> [OwnerSighting]
    /// Sightings of rotating beacons' bikes stored unverified (`SightingReport.verifiedRotating`), for the operator.
    func unverifiedSightings() async throws -> Int
    /// Whether a sighting with this id is stored.
    func hasSighting(_ id: String) async throws -> Bool
    /// Deletes sightings received before `cutoff`, and notifications finished before it; returns the sightings deleted.
    func purge(before cutoff: Date) async throws -> Int

    // MARK: Notifications

    /// Takes the oldest message due by `now` whose target is not in `busyTargets` (the targets this process is
    /// delivering to, so that one slow endpoint holds one delivery lane, however many messages it is owed), and
    /// holds it until `heldUntil`: no other server of a shared database takes it before then, and if this process
    /// dies it is due again at that time. Nil when none is due. A SQLite file has one server, whose worker takes
    /// messages one at a time and excludes the ones in flight by their targets, so nothing is written here.
    func takeDueNotification(now: Date, busyTargets: Set<String>, heldUntil: Date) async throws
        -> PendingNotification?
    /// Records what came of one attempt at a message `takeDueNotification` gave.
    func recordAttempt(_ outcome: NotificationOutcome, of notification: PendingNotification, now: Date) async throws
    /// When the next undelivered message whose target is not in `busyTargets` is due, if any is owed.
    func nextNotificationDue(busyTargets: Set<String>) async throws -> Date?
    /// Counts by state, for the operator and the tests.
    func notificationCounts() async throws -> NotificationCounts

    // MARK: Limits

    /// `key`'s count under `limit` and when its window ends, as the database holds it (nothing counted); what
    /// `CountLimit` makes of it says whether one more may go ahead. Every server of one database counts together
    /// (issue 52).
    func tally(_ limit: CountLimit, key: String) async throws -> CountLimit.Tally
    /// Counts one for `key` under `limit` and then, unless that one is past it (`CountLimit.wait(counted:)`), one for
    /// everyone (`CountLimit.everyone`) under `everyone`; a window that is over (`CountLimit.isOver`) starts again at
    /// `now`. One transaction of one upsert each, so servers counting at once each see the others' counts, and a
    /// network refused costs everyone's budget nothing.
    func count(_ limit: CountLimit, key: String, under everyone: CountLimit?, now: Date) async throws
        -> (counted: CountLimit.Tally, everyone: CountLimit.Tally?)
    /// Deletes the counts whose windows ended by `now` (the sweep's); returns how many.
    func forgetEndedCounts(now: Date) async throws -> Int

    // MARK: The operator's figures

    /// Bikes, reports and the messages owed by channel, counted at one moment (the metrics, `status`).
    func operatorFigures() async throws -> OperatorFigures

    /// Throws unless the database takes a write now (what `/readyz` asks).
    func takesAWrite() async throws

    /// Closes the store's connections; nothing may be asked of it afterwards.
    func close() async
}

/// How far the missing list (its ETag) and the stations have changed.
public struct RegistryVersions: Sendable, Equatable {
    public var list: Int64
    public var stations: Int64

    public init(list: Int64, stations: Int64) {
        self.list = list
        self.stations = stations
    }
}

/// A station's refresh, as the server noted it.
public struct StationRefresh: Sendable {
    public var at: Date
    /// Its User-Agent (beacond/VERSION), if it sent one.
    public var userAgent: String?

    public init(at: Date, userAgent: String?) {
        self.at = at
        self.userAgent = userAgent
    }
}

public struct NotificationCounts: Sendable, Equatable, CustomStringConvertible {
    public var owed: Int
    public var delivered: Int
    public var abandoned: Int

    public var description: String { "owed \(owed), delivered \(delivered), abandoned \(abandoned)" }
}

/// Defaults for the protocol's times.
extension RegistryStore {
    public func addStation(name: String, latitude: Double, longitude: Double) async throws -> String {
        try await addStation(name: name, latitude: latitude, longitude: longitude, now: Date())
    }
    public func revokeStation(name: String) async throws -> Bool { try await revokeStation(name: name, now: Date()) }
    public func register(_ new: NewBike) async throws -> RegisterOutcome { try await register(new, now: Date()) }
    /// The change under the default rules, now: for the tests and the tools.
    public func update(id: String, ownerToken: String, _ change: BikeChange) async throws -> BikeUpdate {
        try await update(id: id, ownerToken: ownerToken, change, rules: MissingReportRules(), now: Date())
    }
    public func delete(id: String, ownerToken: String) async throws -> Bool {
        try await delete(id: id, ownerToken: ownerToken, now: Date())
    }
    public func record(_ sighting: SightingReport, from station: Station) async throws -> RecordOutcome {
        try await record(sighting, from: station, now: Date())
    }
    public func sightings(bikeId: String) async throws -> [OwnerSighting] {
        try await sightings(bikeId: bikeId, limit: 1000)
    }
    public func station(key: String) async throws -> Station? { try await station(keyHash: Secrets.hash(key)) }
}

/// Opens a store by its location: a `postgres://` (or `postgresql://`) URL, or a SQLite file's path.
public enum RegistryStores {
    /// - Parameter connections: at most this many connections at once (PostgreSQL), or readers (SQLite). The
    ///   notification worker holds one per message it delivers (up to 8), requests take the rest.
    ///   - fileMode: a SQLite file's permissions, and those of the files beside it (0600; 0640 under systemd, for
    ///     the service's group), whatever the umask.
    ///   - postgresDeadline: how long one PostgreSQL operation may take before it is an error (a 503): 5 s.
    ///   - observer: told of each operation the store asks of its database (`serve --metrics-listen`).
    public static func open(
        _ location: String, connections: Int = 16, fileMode: mode_t = 0o600,
        postgresDeadline: Duration = PostgresRegistryStore.standardDeadline, observer: (any StoreObserver)? = nil,
        logger: Logger = Logger(label: "bike-registry.store")
    ) async throws(RegistryStoreError) -> any RegistryStore {
        if PostgresLocation.isPostgres(location) {
            return try await PostgresRegistryStore.open(
                PostgresLocation(location), connections: connections, deadline: postgresDeadline, observer: observer,
                logger: logger)
        }
        return try SQLiteRegistryStore(
            path: location, readers: connections, mode: fileMode, observer: observer, logger: logger)
    }
}

extension RegistryStores {
    /// Whether `location` names a PostgreSQL database (`postgres://` or `postgresql://`) rather than a SQLite file.
    public static func isPostgres(_ location: String) -> Bool { PostgresLocation.isPostgres(location) }

    /// Throws when `location` is a `postgres://` URL that cannot be read (a usage error, said before connecting).
    public static func check(_ location: String) throws(RegistryStoreError) {
        if PostgresLocation.isPostgres(location) { _ = try PostgresLocation(location).configuration() }
    }
}
