import BikeRegistryCore
public import BikeRegistryStore
import DaemonSupport
import Foundation
public import Hummingbird
import HummingbirdCore
public import Logging

/// bike-registry's server: the station and owner routes, the notification worker and the retention sweep, as one
/// Hummingbird application. Under systemd it says READY=1 once it accepts connections.
public enum RegistryApplication {
    /// The `Server` header of every answer.
    static let serverName = "bike-registry"

    public static func make(
        database: any RegistryStore, configuration: RegistryServerConfiguration, logger: Logger,
        onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        let doorbell = Doorbell()
        let targets = NotificationTargetPolicy(allowPrivate: configuration.allowPrivateWebhooks)
        let router = Router(context: RegistryRequestContext.self)
        let refreshes = StationRefreshLog(
            database: database, interval: configuration.refreshWriteInterval, logger: logger)
        let snapshot = RegistrySnapshot(
            database: database, interval: configuration.snapshotInterval, logger: logger,
            sealer: configuration.beaconKeys, now: configuration.now, encode: StationRoutes.encode)
        router.add(middleware: RequestLog(logger: logger))
        router.add(middleware: StoreUnavailable(logger: logger))
        router.add(middleware: MethodNotAllowed())
        let stations = StationRoutes(
            database: database, limiter: RateLimiter(perMinute: configuration.requestsPerMinute), doorbell: doorbell,
            refreshes: refreshes, snapshot: snapshot, now: configuration.now)
        stations.add(to: router)
        // The API and the pages share their limits: a page is no way around the API's.
        let registrations = RegistrationLimits(
            perNetworkPerMinute: configuration.registrationsPerMinute,
            totalPerMinute: configuration.registrationsPerMinuteTotal)
        let registrar = Registrar(
            database: database, mode: configuration.registration, limits: registrations,
            wrongCodes: DailyCounts(limit: configuration.wrongClaimCodesPerDay),
            now: configuration.now)
        let ownerRequests = RateLimiter<String>(perMinute: configuration.requestsPerMinute)
        let emails = EmailChanges(database: database, mail: configuration.mail, doorbell: doorbell)
        OwnerRoutes(
            database: database, registrar: registrar, requests: ownerRequests, targets: targets,
            snapshot: snapshot, reports: configuration.missingReports, emails: emails, now: configuration.now
        ).add(to: router)
        MailRoutes(
            database: database, links: RateLimiter(perMinute: configuration.mailLinksPerMinute), now: configuration.now
        ).add(to: router)
        let finder = Finder(
            database: database, lookups: RateLimiter(perMinute: configuration.beaconLookupsPerMinute),
            reports: DailyCounts(limit: configuration.abuseReportsPerDay), doorbell: doorbell, snapshot: snapshot,
            now: configuration.now)
        FinderRoutes(finder: finder).add(to: router)
        FoundPages(finder: finder, publicURL: configuration.publicURL).add(to: router)
        let deliveries = DeliveryClient()
        var sender = NotificationSender(
            targets: targets, client: deliveries.client, deadline: configuration.deliveryDeadline)
        if let mail = configuration.mail {
            sender.mail = MailDelivery(
                settings: mail, publicURL: configuration.publicURL ?? "", database: database, logger: logger)
        }
        OwnerPages(
            database: database, registrar: registrar, requests: ownerRequests,
            tests: RateLimiter(perMinute: configuration.testsPerMinute), targets: targets, sender: sender,
            snapshot: snapshot, reports: configuration.missingReports, emails: emails, now: configuration.now,
            region: (configuration.pageRegionUUID, configuration.pageRegionMajor),
            publicURL: configuration.publicURL
        ).add(to: router)
        let worker = NotificationWorker(
            database: database, doorbell: doorbell, sender: sender, lanes: configuration.deliveryLanes,
            retryBase: configuration.retryBase, now: configuration.now, idle: configuration.notificationIdleWait,
            logger: logger)
        let notifier = SystemdNotifier(environment: ProcessInfo.processInfo.environment)
        let date = HTTPDate()
        return Application(
            router: router,
            server: HTTPServerBuilder { responder in
                GuardedHTTP1Channel(
                    responder: responder, head: configuration.requestHeadTimeout,
                    idle: configuration.idleTimeout
                ) { [RefreshShortcut(routes: stations, date: date, serverName: Self.serverName, logger: logger)] }
            },
            configuration: .init(
                address: .hostname(configuration.host, port: configuration.port), serverName: Self.serverName,
                // Past this the server stops accepting and new clients wait in the listen queue: the process keeps
                // the descriptors its database and deliveries need (`DescriptorLimit`).
                availableConnectionsDelegate: MaximumAvailableConnections(configuration.maximumConnections)),
            // Stopped in reverse order: the deliveries' client after the worker and the pages that use it.
            services: [
                deliveries, snapshot, worker, refreshes,
                RetentionService(database: database, retention: configuration.retention, logger: logger),
                ReportSweeper(
                    database: database, rules: configuration.missingReports,
                    interval: configuration.reportSweepInterval, now: configuration.now, snapshot: snapshot,
                    doorbell: doorbell, logger: logger),
            ],
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? configuration.port
                logger.info(
                    "bike-registry listening",
                    metadata: ["address": "\(configuration.host):\(port)", "database": "\(database.location)"])
                notifier?.notify(["READY=1", "STATUS=listening on \(configuration.host):\(port)"])
                await onServerRunning(port)
            },
            logger: logger)
    }
}
