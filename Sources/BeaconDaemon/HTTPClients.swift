import AsyncHTTPClient
import BeaconRegistryClient
import LockedValue

/// The one HTTP client the registries share (made when first needed), shut down when the daemon ends.
final class HTTPClients: Sendable {
    private let made = LockedValue<HTTPClient?>(nil)

    func client(for configuration: RegistryConfiguration) -> HTTPClient {
        made.withLock { made in
            if let made { return made }
            let client = HTTPRegistry.makeHTTPClient(configuration)
            made = client
            return client
        }
    }

    /// async-http-client's own asynchronous shutdown: its `syncShutdown` blocks a thread, and is refused from async code.
    func shutdown() async {
        guard let client = made.withLock({ $0 }) else { return }
        try? await client.shutdown()
    }
}
