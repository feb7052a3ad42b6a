public import Logging
public import ServiceLifecycle
import UnixSignals

/// SIGTERM, as a rolling restart sends it: `/readyz` answers 503 at once (`Readiness.stop`), the server goes on
/// serving for the drain delay so that every load balancer's next check sees it and sends no more, and only then
/// does the service group shut down gracefully, the server closing its listener and finishing what it holds. Run as
/// a service that, returning, shuts the group down (`ServiceGroupConfiguration.ServiceConfiguration`'s
/// `.gracefullyShutdownGroup`). SIGINT (a person at a terminal) stops at once, as before.
public struct DrainOnSignal: Service {
    let readiness: Readiness
    let delay: Duration
    let logger: Logger

    public init(readiness: Readiness, delay: Duration, logger: Logger) {
        self.readiness = readiness
        self.delay = delay
        self.logger = logger
    }

    public func run() async throws {
        let terminations = await UnixSignalsSequence(trapping: .sigterm)
        var terminated = false
        for await _ in terminations.cancelOnGracefulShutdown() {
            terminated = true
            break
        }
        guard terminated else { return }
        readiness.stop()
        logger.notice(
            "SIGTERM: /readyz answers 503 from now; serving on for the drain delay, then stopping",
            metadata: ["drain.seconds": "\(delay.components.seconds)"])
        try? await Task.sleep(for: delay)
    }
}
