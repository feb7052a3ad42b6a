public import ServiceLifecycle
import UnixSignals

/// SIGHUP: read the configuration again. A configuration with errors is refused whole (each error logged,
/// the running one kept); a good one has its registry settings applied at once (and the API key re-read),
/// and any other changed key is named in the log as taking effect at the next restart. Either way the
/// missing-bike set is refreshed now.
public struct ReloadService: Service {
    let reload: @Sendable () async -> Void

    public init(reload: @escaping @Sendable () async -> Void) { self.reload = reload }

    public func run() async throws {
        let hangups = await UnixSignalsSequence(trapping: .sighup)
        for await _ in hangups.cancelOnGracefulShutdown() {
            await reload()
        }
    }
}
