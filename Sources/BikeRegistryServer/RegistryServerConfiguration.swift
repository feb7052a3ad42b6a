public import BikeRegistryCore
import BikeRegistryStore
public import Foundation

/// How `bike-registry serve` runs: where it listens and what it allows.
public struct RegistryServerConfiguration: Sendable {
    public var host: String
    public var port: Int
    /// Webhook and ntfy targets on loopback or private addresses are refused unless this is set (server-side
    /// request forgery: an owner could otherwise make the registry call into its own network).
    public var allowPrivateWebhooks: Bool
    /// Sightings older than this are deleted.
    public var retention: Duration
    /// How owners register bikes: by the claim code on a provisioned beacon's label (the default), or also by the
    /// beacon's numbers, first come first served.
    public var registration = RegistrationMode.claimCode
    /// Wrong claim codes one network may send in a day; then it may not register until that day is over.
    public var wrongClaimCodesPerDay = 10
    /// When a missing report lapses, and when its owner is reminded (`--missing-lapse`, `--missing-reminder`).
    public var missingReports = MissingReportRules()
    /// How often reports are looked at for reminders and lapses.
    public var reportSweepInterval: Duration = .seconds(60)
    /// The longest the notification worker waits before looking for due messages nothing rang for (another server's).
    public var notificationIdleWait: Duration = .seconds(30)
    /// "Found a beacon?": lookups per network per minute, and reports per network per day; and the same from
    /// everyone together, so that the reports kept cannot grow with the networks one attacker holds.
    public var beaconLookupsPerMinute = 30
    public var abuseReportsPerDay = 5
    public var beaconLookupsPerMinuteTotal = 600
    public var abuseReportsPerDayTotal = 200
    /// The registry's clock for its time rules (the limits' windows, a report's lapse): the tests' is a manual one.
    public var now: @Sendable () -> Date = { Date() }
    /// Opens the rotating beacons' keys (`--key-file`), to list missing rotating bikes and verify their sightings;
    /// nil lists none of them, and leaves their sightings unverified.
    public var beaconKeys: BeaconKeySealer?
    /// Registrations per network (an IPv4 address, an IPv6 /64) per minute.
    public var registrationsPerMinute: Int
    /// Registrations from everyone together per minute.
    public var registrationsPerMinuteTotal = 120
    /// Where owners reach this registry (`https://bikes.example.org`): the only source of the links the pages show.
    /// Without it a page shows the link relative to the site (its script writes it whole, from the address bar),
    /// since a request's Host header is whatever its sender wrote. An https URL also makes the form's cookie Secure.
    public var publicURL: String?
    /// Requests per station key, and per owner token, per minute.
    public var requestsPerMinute: Int
    /// A failed notification's first retry waits this long, doubling up to an hour.
    public var retryBase: Duration = .seconds(5)
    /// Notifications delivered at once. One target holds at most one lane, so a slow endpoint delays only itself
    /// while fewer than this many are slow.
    public var deliveryLanes = 16
    /// One delivery's whole deadline: the target's lookup, connecting, the answer's head and its body.
    public var deliveryDeadline: Duration = .seconds(15)
    /// A request's head must arrive within this of its first byte.
    public var requestHeadTimeout: Duration = .seconds(10)
    /// A connection with no request under way is closed after this (and a request's body must arrive within it).
    public var idleTimeout: Duration = .seconds(60)
    /// Whether the server says it is ready (`GET /readyz`); `serve` stops it on SIGTERM before draining.
    public var readiness = Readiness()
    /// Connections served at once; more wait in the listen queue.
    public var maximumConnections = 8_192
    /// Stations' refreshes are noted in memory and written this often (`StationRefreshLog`).
    public var refreshWriteInterval: Duration = .seconds(5)
    /// How often the stations and the missing list kept in memory are checked against the database
    /// (`RegistrySnapshot`): a revoked key is refused within this.
    public var snapshotInterval: Duration = .milliseconds(250)
    /// The lists served lately that a station may hold, for the changes since each (`ListHistory`): at most this
    /// many (a day of a rotating beacon's 15-minute windows), and their entries at most this many bytes.
    public var listHistoryVersions = 96
    public var listHistoryBytes = 64 << 20
    /// The registration page's prefilled beacon UUID and major: FindMyBike's region, which beacond listens for.
    public var pageRegionUUID = "21EECF71-D5C7-4A00-9B90-27C94B5146EA"
    public var pageRegionMajor = 1
    /// E-mail to owners, through the operator's relay (`--smtp`); nil keeps it off. Needs `publicURL`: every message
    /// carries a link.
    public var mail: MailSettings?
    /// Requests for a message's links (confirm, unsubscribe, sightings) per network per minute.
    public var mailLinksPerMinute = 60
    /// "Send a test" on a bike's page, per bike per minute.
    public var testsPerMinute = 6
    /// What the registry counts as it works (`serve --metrics-listen`); nil counts nothing. The store it serves from
    /// should be opened with the same as its observer, for the store's series.
    public var metrics: RegistryMetrics?
    /// Where the metrics' page is served, on a listener of its own; nil serves none (the counts are still kept when
    /// `metrics` is given).
    public var metricsListen: MetricsListen?
    /// The store's connections at most (`--database-connections`), which the page shows beside those in use.
    public var databaseConnections = 16
    /// The channels messages go on, made from the HTTP channels' delivery and the mail's: the registry's own
    /// (`NotificationChannels.standard`), or more for a test that adds one.
    var channels: @Sendable (HTTPDelivery, MailDelivery?) -> NotificationChannels = NotificationChannels.standard
    /// Told of what happens as it happens (the list version held, each delivery written), for a test to wait on.
    var events: RegistryEvents?

    public init(
        host: String = "127.0.0.1", port: Int = 8180, allowPrivateWebhooks: Bool = false,
        retention: Duration = .seconds(90 * 86_400),
        registrationsPerMinute: Int = 20, requestsPerMinute: Int = 600
    ) {
        self.host = host
        self.port = port
        self.allowPrivateWebhooks = allowPrivateWebhooks
        self.retention = retention
        self.registrationsPerMinute = registrationsPerMinute
        self.requestsPerMinute = requestsPerMinute
    }
}
