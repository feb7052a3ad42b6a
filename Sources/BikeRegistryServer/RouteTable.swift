import HTTPTypes
import Hummingbird

/// One route of the registry: its method, its path (Hummingbird's: `:name` is one segment) and what answers it.
struct Route: Sendable {
    var method: HTTPRequest.Method
    var path: String
    var answer: @Sendable (Request, RegistryRequestContext) async throws -> Response

    static func get(
        _ path: String, _ answer: @escaping @Sendable (Request, RegistryRequestContext) async throws -> Response
    ) -> Route { Route(method: .get, path: path, answer: answer) }

    static func post(
        _ path: String, _ answer: @escaping @Sendable (Request, RegistryRequestContext) async throws -> Response
    ) -> Route { Route(method: .post, path: path, answer: answer) }

    static func patch(
        _ path: String, _ answer: @escaping @Sendable (Request, RegistryRequestContext) async throws -> Response
    ) -> Route { Route(method: .patch, path: path, answer: answer) }

    static func delete(
        _ path: String, _ answer: @escaping @Sendable (Request, RegistryRequestContext) async throws -> Response
    ) -> Route { Route(method: .delete, path: path, answer: answer) }

    /// Its path's segments, `*` for each parameter.
    var pattern: [Substring] { path.split(separator: "/").map { $0.hasPrefix(":") ? "*" : $0 } }
}

/// Every route the registry answers, in one list: the router is made from it, and so is the 405 that names the
/// methods a known path takes (`MethodNotAllowed`), so the two cannot disagree.
struct RouteTable: Sendable {
    let routes: [Route]

    func adding(_ more: [Route]) -> RouteTable { RouteTable(routes: routes + more) }

    func add(to router: Router<RegistryRequestContext>) {
        for route in routes { router.on(RouterPath(route.path), method: route.method, use: route.answer) }
    }

    /// The methods the path takes (a GET's path takes HEAD too), or nil when no route has it.
    func methods(for segments: [Substring]) -> [HTTPRequest.Method]? {
        let matching = routes.filter { route in
            route.pattern.count == segments.count && zip(route.pattern, segments).allSatisfy { $0 == "*" || $0 == $1 }
        }
        guard !matching.isEmpty else { return nil }
        var methods: [HTTPRequest.Method] = []
        for method in matching.map(\.method) {
            methods.append(method)
            if method == .get { methods.append(.head) }
        }
        return methods
    }
}
