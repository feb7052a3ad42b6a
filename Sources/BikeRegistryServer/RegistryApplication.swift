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
        let parts = RegistryParts(database: database, configuration: configuration, logger: logger)
        let router = Router(context: RegistryRequestContext.self)
        router.add(middleware: RequestLog(logger: logger, metrics: configuration.metrics))
        router.add(middleware: StoreUnavailable(logger: logger))
        router.add(middleware: MethodNotAllowed(table: parts.routes))
        parts.routes.add(to: router)
        let notifier = SystemdNotifier(environment: ProcessInfo.processInfo.environment)
        return Application(
            router: router,
            server: HTTPServerBuilder { responder in
                GuardedHTTP1Channel(
                    responder: responder, head: configuration.requestHeadTimeout, idle: configuration.idleTimeout)
            },
            configuration: .init(
                address: .hostname(configuration.host, port: configuration.port), serverName: Self.serverName,
                // Past this the server stops accepting and new clients wait in the listen queue: the process keeps
                // the descriptors its database and deliveries need (`DescriptorLimit`).
                availableConnectionsDelegate: MaximumAvailableConnections(configuration.maximumConnections)),
            services: parts.services,
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
