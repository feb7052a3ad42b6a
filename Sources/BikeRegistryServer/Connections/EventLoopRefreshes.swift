import HTTPTypes
import HummingbirdCore
import Logging
import NIOCore

/// What the two handlers that answer a station's refresh on the connection's event loop share (`RefreshFastPath`
/// from the bytes read, `RefreshShortcut` from the decoded head): the routes' decision, the `Date` and `Server`
/// every answer carries, and the metrics and log line the router would have written for it.
struct EventLoopRefreshes: Sendable {
    let routes: StationRoutes
    let date: HTTPDate
    let serverName: String
    let logger: Logger
    let metrics: RegistryMetrics?

    /// An answer written here, counted and logged as the router's are.
    func record(status: Int, path: @autoclosure () -> String, since started: ContinuousClock.Instant) {
        metrics?.record(method: .get, route: "/bikes", status: status, after: .now - started)
        RequestLogLine.write(
            logger, method: .get, path: LoggedPath(route: "/bikes", path: path()), status: status, since: started)
    }
}
