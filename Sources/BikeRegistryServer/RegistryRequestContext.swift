import Hummingbird
import NIOCore

/// A request's context: Hummingbird's, with the connection's remote address, by which registrations are limited.
/// (With Hummingbird's BasicRequestContext, which has no address, every client shared one limit of 20 a minute.)
struct RegistryRequestContext: RequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    let remoteAddress: SocketAddress?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}
