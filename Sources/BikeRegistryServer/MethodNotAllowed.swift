import HTTPTypes
import Hummingbird

/// 405 with `Allow` for a method a known path does not take (the router alone would say 404, as if the path did
/// not exist), from the route table the router is made of. Looked at only when the router found nothing, so a
/// request that is answered costs nothing here.
struct MethodNotAllowed<Context: RequestContext>: RouterMiddleware {
    let table: RouteTable

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            guard let methods = table.methods(for: request.uri.path.split(separator: "/")),
                !methods.contains(request.method)
            else { throw error }
            let allowed = methods.map(\.rawValue).joined(separator: ", ")
            throw HTTPError(
                .methodNotAllowed, headers: [.allow: allowed],
                message: "\(request.method.rawValue) is not one of \(allowed) here")
        }
    }
}
