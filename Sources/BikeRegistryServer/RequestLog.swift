import HTTPTypes
import Hummingbird
import Logging

/// One log line per request: method, the route matched (never the query, which may carry `?key=`, nor an owner
/// page's token: `LoggedPath`), status and time taken. Health checks (`HealthRoutes`) only at debug: balancers ask
/// every second. The same method, route and status are what the request is counted under for the metrics, when
/// they are on (`RegistryMetrics`).
struct RequestLog<Context: RequestContext>: RouterMiddleware {
    let logger: Logger
    let metrics: RegistryMetrics?

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        let started = ContinuousClock.now
        metrics?.requestStarted()
        do {
            let response = try await next(request, context)
            ended(request, context: context, status: response.status.code, since: started)
            return response
        } catch let error as any HTTPResponseError {
            ended(request, context: context, status: error.status.code, since: started)
            throw error
        } catch {
            ended(request, context: context, status: 500, since: started)
            throw error
        }
    }

    private func ended(_ request: Request, context: Context, status: Int, since started: ContinuousClock.Instant) {
        let route = LoggedPath.matched(context.endpointPath)
        metrics?.requestEnded(method: request.method, route: route, status: status, after: .now - started)
        write(
            method: request.method, path: LoggedPath(route: route, path: request.uri.path), status: status,
            since: started, quiet: route.map(HealthRoutes.paths.contains) ?? false)
    }

    /// The line itself. Nothing is worked out (the path, the time taken) when the logger would drop it: a registry
    /// run at `--log-level warning` answers most requests, the stations' refreshes, with no line.
    private func write(
        method: HTTPRequest.Method, path: @autoclosure () -> LoggedPath, status: Int,
        since started: ContinuousClock.Instant, quiet: Bool
    ) {
        let level: Logger.Level = quiet ? .debug : status >= 500 ? .error : .info
        guard logger.logLevel <= level else { return }
        let path = path()
        let elapsed = ContinuousClock.now - started
        let milliseconds = Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000
        logger.log(
            level: level, "request",
            metadata: [
                "http.method": "\(method.rawValue)", "http.path": "\(path)", "http.status": "\(status)",
                "http.ms": "\(Int(milliseconds.rounded()))",
            ])
    }
}

/// A request's path as the log may keep it: the route the router matched (`/my/{id}/{token}/{action}`), each
/// parameter filled from the request's path only when it is plain (an id, an action), and the owner token always
/// `-`. Built from the route, not by picking at the path: the router accepts spellings (`//my/ID/TOKEN`,
/// `/my/ID//TOKEN`, a trailing slash, percent-encoding) that a pattern over the path would have to foresee, and one
/// it did not put the token in the log. A path no route matched is written `(no route)`, since any part of it
/// could be a token typed wrongly.
struct LoggedPath: CustomStringConvertible {
    let description: String

    init(route: String?, path: String) {
        guard let route = Self.matched(route) else {
            description = "(no route)"
            return
        }
        let segments = path.split(separator: "/")
        let filled = route.split(separator: "/").enumerated().map { index, part -> Substring in
            guard part.hasPrefix("{"), part.hasSuffix("}") else { return part }
            guard !Self.hidden.contains(part), index < segments.count, Self.isPlain(segments[index]) else {
                return "-"
            }
            return segments[index]
        }
        description = "/" + filled.joined(separator: "/")
    }

    /// The route the router matched (its template, `/my/{id}/{token}`), from a request context's `endpointPath`;
    /// nil when none did.
    static func matched(_ endpointPath: String?) -> String? {
        guard let endpointPath, endpointPath != "NotFound", endpointPath.hasPrefix("/") else { return nil }
        return endpointPath
    }

    /// Never written: an owner page's token, a mail link's code or key, and the beacon a finder looked up or reported
    /// (with the time, it would say who found which bike's beacon).
    private static let hidden: Set<Substring> = ["{token}", "{code}", "{key}", "{uuid}", "{major}", "{minor}"]

    /// Letters, digits, `_` and `-`, at most 64: an id or an action; a token is longer and never shown anyway.
    private static func isPlain(_ segment: Substring) -> Bool {
        (1...64).contains(segment.utf8.count)
            && segment.utf8.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
            }
    }
}
