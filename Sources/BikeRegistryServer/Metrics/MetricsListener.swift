import BikeRegistryStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import ServiceLifecycle

/// Where `serve --metrics-listen` serves the page: a listener of its own, never the public one, so that the
/// operator's firewall decides who reads it. `onListening` is told the port it took (the tests ask for port 0).
public struct MetricsListen: Sendable {
    public var host: String
    public var port: Int
    /// A connection with no request under way is closed after this: a Prometheus keeps its connection and asks
    /// every 15 s, and a client that opens one and says nothing holds one of the listener's few places no longer.
    public var idleTimeout: Duration
    public var onListening: @Sendable (Int) async -> Void

    public init(
        host: String, port: Int, idleTimeout: Duration = .seconds(30),
        onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) {
        self.host = host
        self.port = port
        self.idleTimeout = idleTimeout
        self.onListening = onListening
    }
}

/// The page in Prometheus's text format: what `RegistryMetrics` counted, then what `RegistryFigures` read, read at
/// most once a second however often it is asked.
struct MetricsPage: Sendable {
    let metrics: RegistryMetrics
    let database: any RegistryStore
    let readiness: Readiness
    let snapshot: RegistrySnapshot
    let connections: Int
    let now: @Sendable () -> Date
    private let figures = OnceAWhile<RegistryFigures>(interval: .seconds(1))

    init(
        metrics: RegistryMetrics, database: any RegistryStore, readiness: Readiness, snapshot: RegistrySnapshot,
        connections: Int, now: @escaping @Sendable () -> Date
    ) {
        self.metrics = metrics
        self.database = database
        self.readiness = readiness
        self.snapshot = snapshot
        self.connections = connections
        self.now = now
    }

    func make() async -> [UInt8] {
        let (database, readiness, snapshot, connections, now) = (database, readiness, snapshot, connections, now)
        return metrics.page(
            await figures.value {
                await RegistryFigures.read(
                    database: database, readiness: readiness, snapshot: snapshot, connections: connections, now: now())
            })
    }
}

/// `GET /metrics` on the metrics listener, and nothing else: any other path is a 404 that says where the page is.
/// A few connections at once (a Prometheus or two and an operator's `status`), each let go when idle.
enum MetricsListener {
    /// Connections the listener serves at once; more wait in its listen queue.
    static let connections = 16

    static func make(_ listen: MetricsListen, page: MetricsPage, logger: Logger) -> some Service {
        let router = Router()
        router.get("/metrics") { _, _ -> Response in
            let body = await page.make()
            return Response(
                status: .ok,
                headers: [
                    .contentType: "text/plain; version=0.0.4; charset=utf-8", .cacheControl: "no-store",
                ],
                body: .init(byteBuffer: ByteBuffer(bytes: body)))
        }
        router.add(middleware: NotTheMetrics())
        return Application(
            router: router,
            server: .http1(configuration: .init(idleTimeout: TimeAmount(listen.idleTimeout))),
            configuration: .init(
                address: .hostname(listen.host, port: listen.port), serverName: RegistryApplication.serverName,
                availableConnectionsDelegate: MaximumAvailableConnections(connections)),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? listen.port
                logger.info("metrics on http://\(listen.host):\(port)/metrics")
                await listen.onListening(port)
            },
            logger: logger)
    }
}

/// A 404 that names the one page there is, and a 405 for the page asked with another method than GET.
private struct NotTheMetrics<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            if request.uri.path == "/metrics" {
                return Response(
                    status: .methodNotAllowed,
                    headers: [.allow: "GET, HEAD", .contentType: "text/plain; charset=utf-8"],
                    body: .init(byteBuffer: ByteBuffer(string: "/metrics is read with GET\n")))
            }
            return Response(
                status: .notFound, headers: [.contentType: "text/plain; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: "bike-registry's metrics are on GET /metrics\n")))
        }
    }
}
