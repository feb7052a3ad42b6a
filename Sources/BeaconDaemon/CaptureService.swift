import BeaconEngine
import Logging
public import ServiceLifecycle

/// Runs the capture source for the service group. It is the last service, so it starts once the outbox,
/// registry, engine and control socket are up (and then tells systemd the daemon is ready), and it is the first
/// to stop on SIGTERM: no advert is taken in that the engine will not see.
public struct CaptureService: Service {
    let source: any CaptureSource
    let ring: AdvertRing
    let ready: @Sendable () -> Void
    let logger: Logger

    public struct Failed: Error, CustomStringConvertible {
        public var description: String
    }

    public func run() async throws {
        source.start(into: ring)
        ready()
        logger.info("capture started", metadata: ["capture.backend": "\(source.status.current.backend)"])
        // Watch for a source that gives up (the group then fails, and systemd restarts the daemon), until shutdown.
        while !Task.isShuttingDownGracefully {
            let snapshot = source.status.current
            if snapshot.state == .failed {
                source.stop()
                await source.waitUntilStopped()
                throw Failed(description: "capture failed: \(snapshot.lastError ?? "unknown error")")
            }
            // Two wake-ups a second (failure is rare), cut short by a graceful shutdown.
            _ = try? await cancelWhenGracefulShutdown { try await Task.sleep(for: .milliseconds(500)) }
        }
        source.stop()
        await source.waitUntilStopped()
        logger.info("capture stopped")
    }
}
