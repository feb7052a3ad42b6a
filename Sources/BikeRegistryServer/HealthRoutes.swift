import BikeRegistryStore
import HTTPTypes
import Hummingbird

/// `GET /livez` (the process answers) and `GET /readyz` (`Readiness`: 200 while the database takes a write within a
/// second and the server is not stopping, 503 otherwise), for load balancers and supervisors. Neither needs a key
/// and neither says more than `ok` or why not: no host, no version, no error's text. Both are asked every second by
/// every balancer, so neither is logged but at debug (`RequestLog`).
struct HealthRoutes {
    static let paths: Set<String> = ["/livez", "/readyz"]

    let database: any RegistryStore
    let readiness: Readiness

    var routes: [Route] {
        [
            .get("/livez") { _, _ in Self.plain(.ok, "ok") },
            .get("/readyz") { [database, readiness] _, _ in
                switch await readiness.answer(database) {
                case .ready: Self.plain(.ok, "ok")
                case .stopping: Self.plain(.serviceUnavailable, "stopping")
                case .databaseUnavailable: Self.plain(.serviceUnavailable, "database unavailable")
                }
            },
        ]
    }

    private static func plain(_ status: HTTPResponse.Status, _ text: String) -> Response {
        var headers: HTTPFields = [.contentType: "text/plain; charset=utf-8", .cacheControl: "no-store"]
        if status == .serviceUnavailable { headers[.retryAfter] = "1" }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text + "\n")))
    }
}
