import HTTPTypes
import Hummingbird

/// 405 with `Allow` for a method a known path does not take (the router alone would say 404, as if the path did
/// not exist). Looked at only when the router found nothing, so a request that is answered costs nothing here.
struct MethodNotAllowed<Context: RequestContext>: RouterMiddleware {
    /// Each route's path, `*` for one segment, and its methods.
    static var routes: [(pattern: [Substring], methods: [HTTPRequest.Method])] {
        [
            (["bikes"], [.get, .head]), (["sightings"], [.post]), (["owner", "bikes"], [.post]),
            (["owner", "bikes", "*"], [.get, .head, .patch, .delete]),
            (["owner", "bikes", "*", "sightings"], [.get, .head]),
            // The owner pages.
            ([], [.get, .head]), (["register"], [.post]), (["my", "*", "*"], [.get, .head]),
            (["my", "*", "*", "*"], [.post]), (["static", "*"], [.get, .head]),
        ]
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            let segments = request.uri.path.split(separator: "/")
            if let route = Self.routes.first(where: { route in
                route.pattern.count == segments.count
                    && zip(route.pattern, segments).allSatisfy { $0 == "*" || $0 == $1 }
            }), !route.methods.contains(request.method) {
                throw HTTPError(
                    .methodNotAllowed, headers: [.allow: route.methods.map(\.rawValue).joined(separator: ", ")],
                    message:
                        "\(request.method.rawValue) is not one of \(route.methods.map(\.rawValue).joined(separator: ", ")) here"
                )
            }
            throw error
        }
    }
}
