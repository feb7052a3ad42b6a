import BikeRegistryCore
import BikeRegistryStore
import Foundation

/// The owner's side, shared by the API (`OwnerRoutes`) and the pages (`OwnerPages`) as `Finder` is by the finder's:
/// each rule once. Which bike a token opens and how often it may ask; which targets may be saved on which channel;
/// the report's rules and the server's clock for every change; and the stations' list told of every change that
/// moves it. The front ends only read their requests and write their answers.
struct OwnerService: Sendable {
    let database: any RegistryStore
    /// Requests by owner token's hash, the API's and the pages' together.
    let requests: RateLimiter<String>
    let channels: NotificationChannels
    let snapshot: RegistrySnapshot
    let reports: MissingReportRules
    let emails: EmailChanges
    let now: @Sendable () -> Date

    enum Owned {
        case bike(Bike)
        /// Too many requests with this token: the seconds to wait.
        case wait(seconds: Int)
        /// No bike has this id with this token; `ownerToken` says whether the token is any bike's.
        case none(ownerToken: Bool)
    }

    /// The bike with `id` whose owner's token this is.
    func owned(id: String, token: String) async throws -> Owned {
        if let wait = requests.retryAfter(Secrets.hash(token)) { return .wait(seconds: wait) }
        if let bike = try await database.bike(id: id, ownerToken: token) { return .bike(bike) }
        return .none(ownerToken: try await database.isOwnerToken(token))
    }

    /// A change the owner asks for: the report's, and targets to save (nil removes one) by channel.
    struct Change: Sendable {
        var report = BikeChange()
        var targets: [NotificationChannel: String?] = [:]
    }

    enum Changed {
        case updated(Bike)
        case notOwner
        case noOpenReport
        case tooManyReports(next: Date, now: Date)
        /// The channel's field and why its target was not saved.
        case targetRefused(field: String, reason: String)
    }

    /// Checks every target first (nothing is saved if one is refused), changes the address through its confirmation
    /// (`EmailChanges`, which throws its refusals as the API answers them), then the report and the other targets
    /// in one transaction, under the server's rules and clock.
    func change(_ bike: Bike, token: String, _ change: Change) async throws -> Changed {
        var report = change.report
        var address: String??
        for channel in channels.all {
            guard let target = change.targets[channel.id] else { continue }
            if let target, let refusal = await channel.refusal(for: target) {
                return .targetRefused(field: channel.field, reason: refusal)
            }
            if channel.confirmsTargets { address = .some(target) } else { report.targets[channel.id] = .some(target) }
        }
        let now = now()
        if let address {
            try await emails.change(bikeId: bike.id, ownerToken: token, to: address, now: now)
        }
        switch try await database.update(id: bike.id, ownerToken: token, report, rules: reports, now: now) {
        case .notOwner: return .notOwner
        case .noOpenReport: return .noOpenReport
        case .tooManyReports(let next): return .tooManyReports(next: next, now: now)
        case .updated(let changed):
            if changed.missing != bike.missing { try await snapshot.listChanged() }
            return .updated(changed)
        }
    }

    /// Deletes the bike and everything of it; false when the token no longer opens it.
    func delete(_ bike: Bike, token: String) async throws -> Bool {
        guard try await database.delete(id: bike.id, ownerToken: token, now: now()) else { return false }
        if bike.missing { try await snapshot.listChanged() }
        return true
    }

    /// A new owner token in place of this one, shown once; nil when this one no longer opens the bike.
    func rotateToken(_ bike: Bike, token: String) async throws -> String? {
        try await database.rotateOwnerToken(id: bike.id, ownerToken: token)
    }

    /// The open report, for a bike that is missing.
    func openReport(_ bike: Bike) async throws -> MissingReport? {
        bike.missing ? try await database.openReport(bikeId: bike.id) : nil
    }

    /// The bike's newest sightings, at most `limit`.
    func sightings(_ bike: Bike, limit: Int) async throws -> [OwnerSighting] {
        try await database.sightings(bikeId: bike.id, limit: limit)
    }

    /// How many stations refreshed the list in the last hour: how many were listening.
    func stationsListening() async throws -> Int {
        try await database.stationsRefreshed(since: now().addingTimeInterval(-3600))
    }
}
