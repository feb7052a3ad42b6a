import HTTPTypes
import Hummingbird
import Logging

/// One log line per request: method, path (never the query, which may carry `?key=`, nor an owner page's token:
/// `LoggedPath`), status and time taken.
struct RequestLog<Context: RequestContext>: RouterMiddleware {
    let logger: Logger

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        let started = ContinuousClock.now
        do {
            let response = try await next(request, context)
            RequestLogLine.write(
                logger, method: request.method, path: LoggedPath(request.uri.path), status: response.status.code,
                since: started)
            return response
        } catch let error as any HTTPResponseError {
            RequestLogLine.write(
                logger, method: request.method, path: LoggedPath(request.uri.path), status: error.status.code,
                since: started)
            throw error
        } catch {
            RequestLogLine.write(
                logger, method: request.method, path: LoggedPath(request.uri.path), status: 500, since: started)
            throw error
        }
    }
}

/// The line itself, also written for the refreshes `RefreshShortcut` answers before the router.
enum RequestLogLine {
    static func write(
        _ logger: Logger, method: HTTPRequest.Method, path: LoggedPath, status: Int,
        since started: ContinuousClock.Instant
    ) {
        let elapsed = ContinuousClock.now - started
        let milliseconds = Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000
        logger.log(
            level: status >= 500 ? .error : .info, "request",
            metadata: [
                "http.method": "\(method.rawValue)", "http.path": "\(path)", "http.status": "\(status)",
                "http.ms": "\(Int(milliseconds.rounded()))",
            ])
    }
}

/// A request's path as the log may keep it: an owner page's token (`/my/<id>/<token>/...`) is written as `-`, since
/// the path is the page's key.
struct LoggedPath: CustomStringConvertible {
    let description: String

    init(_ path: String) {
        var segments = path.split(separator: "/", omittingEmptySubsequences: false)
        if segments.count >= 4, segments[0].isEmpty, segments[1] == "my" { segments[3] = "-" }
        description = segments.joined(separator: "/")
    }
}
