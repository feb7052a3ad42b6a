import AsyncHTTPClient
import NIOCore
import ServiceLifecycle

/// The HTTP client deliveries go out on: its own, not the process's shared one, since it follows no redirect and
/// bounds connecting. A service, so it is shut down after the worker and the pages that use it.
final class DeliveryClient: Service {
    let client: HTTPClient

    init() {
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
        configuration.timeout = .init(connect: .seconds(5))
        configuration.decompression = .disabled
        client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }

    func run() async throws {
        try? await gracefulShutdown()
        try await client.shutdown()
    }
}
