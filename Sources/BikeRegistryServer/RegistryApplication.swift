import AsyncHTTPClient
public import BikeRegistryStore
import DaemonSupport
import Foundation
public import Hummingbird
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
            database: database, interval: configuration.snapshotInterval, logger: logger, encode: StationRoutes.encode)
        router.add(middleware: RequestLog(logger: logger))
        router.add(middleware: StoreUnavailable(logger: logger))
        router.add(middleware: MethodNotAllowed())
        let stations = StationRoutes(
            database: database, limiter: RateLimiter(perMinute: configuration.requestsPerMinute), doorbell: doorbell,
            refreshes: refreshes, snapshot: snapshot)
        stations.add(to: router)
        // The API and the pages share their limits: a page is no way around the API's.
        let registrations = RateLimiter<String>(perMinute: configuration.registrationsPerMinute)
        let ownerRequests = RateLimiter<String>(perMinute: configuration.requestsPerMinute)
        OwnerRoutes(
            database: database, registrations: registrations, requests: ownerRequests, targets: targets,
            snapshot: snapshot
        ).add(to: router)
        let sender = NotificationSender(targets: targets, client: HTTPClient.shared)
        OwnerPages(
            database: database, registrations: registrations, requests: ownerRequests,
            tests: RateLimiter(perMinute: configuration.testsPerMinute), targets: targets, sender: sender,
            snapshot: snapshot, region: (configuration.pageRegionUUID, configuration.pageRegionMajor)
        ).add(to: router)
        let worker = NotificationWorker(
            database: database, doorbell: doorbell, sender: sender, retryBase: configuration.retryBase, logger: logger)
        let notifier = SystemdNotifier(environment: ProcessInfo.processInfo.environment)
        let date = HTTPDate()
        return Application(
            router: router,
            server: .http1(
                configuration: .init(additionalChannelHandlers: [
                    RefreshShortcut(routes: stations, date: date, serverName: Self.serverName, logger: logger)
                ])),
            configuration: .init(
                address: .hostname(configuration.host, port: configuration.port), serverName: Self.serverName),
            services: [
                snapshot, worker, refreshes,
                RetentionService(database: database, retention: configuration.retention, logger: logger),
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
