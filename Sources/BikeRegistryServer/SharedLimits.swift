import BikeRegistryCore
import BikeRegistryStore
import Foundation

/// The limits on what anonymous clients do, shared by every server of one database: registrations, wrong claim
/// codes, finders' look-ups and reports, and the mail's links. The limits on a credential's requests (a station's
/// key, an owner's token, an owner's tests) bound the load that one client puts on one server and stay in each
/// server's memory (`RateLimiter`); confirmation mails are counted by the messages themselves (`EmailStep`).
struct SharedLimits: Sendable {
    let registrations: NetworkLimit
    /// Counted only when a code claims nothing; a network that reaches it is refused for the rest of its day.
    let wrongClaimCodes: NetworkLimit
    let lookups: NetworkLimit
    let reports: NetworkLimit
    let mailLinks: NetworkLimit

    /// Every limit's name, for the metrics' series that start at 0.
    var names: [String] {
        [registrations, wrongClaimCodes, lookups, reports, mailLinks].flatMap { limit in
            [limit.perNetwork.name] + (limit.everyone.map { [$0.name] } ?? [])
        }
    }

    private static let minute: TimeInterval = 60
    private static let day: TimeInterval = 86_400

    init(_ configuration: RegistryServerConfiguration, database: any RegistryStore) {
        func limit(_ name: String, _ most: Int, per window: TimeInterval, everyone: Int? = nil) -> NetworkLimit {
            NetworkLimit(
                perNetwork: CountLimit(name, most: most, per: window),
                everyone: everyone.map { CountLimit(name + ".everyone", most: $0, per: window) }, database: database,
                metrics: configuration.metrics)
        }
        registrations = limit(
            "registrations", configuration.registrationsPerMinute, per: Self.minute,
            everyone: configuration.registrationsPerMinuteTotal)
        wrongClaimCodes = limit("wrongClaimCodes", configuration.wrongClaimCodesPerDay, per: Self.day)
        lookups = limit(
            "beaconLookups", configuration.beaconLookupsPerMinute, per: Self.minute,
            everyone: configuration.beaconLookupsPerMinuteTotal)
        reports = limit(
            "abuseReports", configuration.abuseReportsPerDay, per: Self.day,
            everyone: configuration.abuseReportsPerDayTotal)
        mailLinks = limit("mailLinks", configuration.mailLinksPerMinute, per: Self.minute)
    }
}
