import BikeRegistryCore
import BikeRegistryStore
import DaemonSupport
import Logging
import ServiceLifecycle

/// The registry's parts, made once from its configuration: the routes' services (`OwnerService`, `Registrar`,
/// `Finder`) and what runs beside them (the list in memory, the notification worker, the sweeps). The API and the
/// pages share one of each, so neither is a way around the other's limits.
struct RegistryParts {
    let stations: StationRoutes
    let snapshot: RegistrySnapshot
    let refreshes: StationRefreshLog
    let doorbell = Doorbell()
    let deliveries = DeliveryClient()
    let sender: NotificationSender
    let routes: RouteTable
    let services: [any Service]

    init(database: any RegistryStore, configuration: RegistryServerConfiguration, logger: Logger) {
        refreshes = StationRefreshLog(database: database, interval: configuration.refreshWriteInterval, logger: logger)
        let metrics = configuration.metrics
        snapshot = RegistrySnapshot(
            database: database, interval: configuration.snapshotInterval, logger: logger,
            sealer: configuration.beaconKeys, now: configuration.now, events: configuration.events,
            history: ListHistory(versions: configuration.listHistoryVersions, bytes: configuration.listHistoryBytes),
            encode: { entries in
                metrics?.listEncoded()
                return try StationList.encode(entries)
            })
        stations = StationRoutes(
            database: database,
            limiter: RateLimiter(
                perMinute: configuration.requestsPerMinute, name: CredentialLimit.stationRequests, metrics: metrics),
            doorbell: doorbell, refreshes: refreshes, snapshot: snapshot, metrics: metrics, now: configuration.now)
        sender = Self.sender(database: database, configuration: configuration, client: deliveries, logger: logger)
        let limits = SharedLimits(configuration, database: database)
        routes = Self.routes(
            database: database, configuration: configuration, limits: limits, stations: stations, snapshot: snapshot,
            doorbell: doorbell, sender: sender
        )
        .adding(HealthRoutes(database: database, readiness: configuration.readiness).routes)
        let worker = NotificationWorker(
            database: database, doorbell: doorbell, sender: sender, lanes: configuration.deliveryLanes,
            retryBase: configuration.retryBase, now: configuration.now, idle: configuration.notificationIdleWait,
            events: configuration.events, metrics: metrics, logger: logger)
        // Stopped in reverse order: the deliveries' client after the worker and the pages that use it.
        services =
            [
                deliveries, snapshot, worker, refreshes,
                RetentionService(database: database, retention: configuration.retention, logger: logger),
                ReportSweeper(
                    database: database, rules: configuration.missingReports,
                    interval: configuration.reportSweepInterval, now: configuration.now, snapshot: snapshot,
                    doorbell: doorbell, events: configuration.events, logger: logger),
            ]
            + Self.metricsListener(database: database, configuration: configuration, snapshot: snapshot, logger: logger)
        metrics?.expect(
            channels: sender.channels.all.map(\.id),
            limits: limits.names + CredentialLimit.names + EmailChanges.limitNames)
    }

    /// The metrics' own listener, when one is configured.
    private static func metricsListener(
        database: any RegistryStore, configuration: RegistryServerConfiguration, snapshot: RegistrySnapshot,
        logger: Logger
    ) -> [any Service] {
        guard let metrics = configuration.metrics, let listen = configuration.metricsListen else { return [] }
        let page = MetricsPage(
            metrics: metrics, database: database, readiness: configuration.readiness, snapshot: snapshot,
            connections: configuration.databaseConnections, now: configuration.now)
        return [MetricsListener.make(listen, page: page, logger: logger)]
    }

    /// The channels, on the deliveries' own client and, when a relay is configured, the mail's.
    private static func sender(
        database: any RegistryStore, configuration: RegistryServerConfiguration, client: DeliveryClient, logger: Logger
    ) -> NotificationSender {
        let http = HTTPDelivery(
            targets: NotificationTargetPolicy(allowPrivate: configuration.allowPrivateWebhooks), client: client.client,
            deadline: configuration.deliveryDeadline)
        let mail = configuration.mail.map { mail in
            MailDelivery(settings: mail, publicURL: configuration.publicURL ?? "", database: database, logger: logger)
        }
        return NotificationSender(
            channels: configuration.channels(http, mail), deadline: configuration.deliveryDeadline)
    }

    /// Every route, from the station's, the owner's (API and pages), the finder's and the mail's links.
    private static func routes(
        database: any RegistryStore, configuration: RegistryServerConfiguration, limits: SharedLimits,
        stations: StationRoutes, snapshot: RegistrySnapshot, doorbell: Doorbell, sender: NotificationSender
    ) -> RouteTable {
        let now = configuration.now
        let registrar = Registrar(
            database: database, mode: configuration.registration, limits: limits.registrations,
            wrongCodes: limits.wrongClaimCodes, now: now)
        let metrics = configuration.metrics
        let owners = OwnerService(
            database: database,
            requests: RateLimiter(
                perMinute: configuration.requestsPerMinute, name: CredentialLimit.ownerRequests, metrics: metrics),
            channels: sender.channels, snapshot: snapshot, reports: configuration.missingReports,
            emails: EmailChanges(database: database, mail: configuration.mail, doorbell: doorbell, metrics: metrics),
            now: now)
        let finder = Finder(
            database: database, lookups: limits.lookups, reports: limits.reports, doorbell: doorbell,
            snapshot: snapshot, now: now)
        let pages = OwnerPages(
            registrar: registrar, owners: owners,
            tests: RateLimiter(
                perMinute: configuration.testsPerMinute, name: CredentialLimit.ownerTests, metrics: metrics),
            sender: sender, region: (configuration.pageRegionUUID, configuration.pageRegionMajor),
            publicURL: configuration.publicURL)
        let links = MailRoutes(
            database: database, links: limits.mailLinks, now: now)
        return RouteTable(
            routes: stations.routes + OwnerRoutes(registrar: registrar, owners: owners).routes + pages.routes
                + FinderRoutes(finder: finder).routes
                + FoundPages(finder: finder, publicURL: configuration.publicURL)
                .routes + links.routes)
    }
}
