/// How `bike-registry serve` runs: where it listens and what it allows.
public struct RegistryServerConfiguration: Sendable {
    public var host: String
    public var port: Int
    /// Webhook and ntfy targets on loopback or private addresses are refused unless this is set (server-side
    /// request forgery: an owner could otherwise make the registry call into its own network).
    public var allowPrivateWebhooks: Bool
    /// Sightings older than this are deleted.
    public var retention: Duration
    /// Registrations per address per minute.
    public var registrationsPerMinute: Int
    /// Requests per station key, and per owner token, per minute.
    public var requestsPerMinute: Int
    /// A failed notification's first retry waits this long, doubling up to an hour.
    public var retryBase: Duration = .seconds(5)
    /// Stations' refreshes are noted in memory and written this often (`StationRefreshLog`).
    public var refreshWriteInterval: Duration = .seconds(5)
    /// How often the stations and the missing list kept in memory are checked against the database
    /// (`RegistrySnapshot`): a revoked key is refused within this.
    public var snapshotInterval: Duration = .milliseconds(250)
    /// The registration page's prefilled beacon UUID and major: FindMyBike's region, which beacond listens for.
    public var pageRegionUUID = "21EECF71-D5C7-4A00-9B90-27C94B5146EA"
    public var pageRegionMajor = 1
    /// "Send a test" on a bike's page, per bike per minute.
    public var testsPerMinute = 6

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
