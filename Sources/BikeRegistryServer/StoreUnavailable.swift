import HTTPTypes
import Hummingbird
import Logging

/// A request the store could not serve (PostgreSQL unreachable, a disk that failed) is answered 503 with
/// `Retry-After`, never 500: nothing is wrong with the request, and a station keeps its sighting and tries again.
/// The cause goes to the log, not to the client.
struct StoreUnavailable<Context: RequestContext>: RouterMiddleware {
    let logger: Logger

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        do {
            return try await next(request, context)
        } catch let error as any HTTPResponseError {
            throw error
        } catch {
            logger.error(
                "the store failed a request",
                metadata: [
                    "http.path": "\(LoggedPath(route: context.endpointPath, path: request.uri.path))",
                    "error": "\(error)",
                ])
            throw HTTPError(
                .serviceUnavailable, headers: [.retryAfter: "5"],
                message: "the registry's database is unavailable; try again shortly")
        }
    }
}
