import AsyncHTTPClient
import BeaconCapture
public import BeaconDelivery
public import BeaconEngine
import BeaconMQTTStation
import BeaconOutbox
import BeaconPOSIX
import BeaconRegistryClient
import BeaconWire
import DaemonSupport
public import Logging
import NIOCore
import ServiceLifecycle
public import StationSettings
import Synchronization
import UnixSignals

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// `beacond run`: capture, engine, registry and outbox wired into one service group.
///
/// Everything that can be wrong at start (state directory, outbox, capture files, control socket, API key)
/// is checked before any service runs, and reported as one line with an exit status. After that the daemon
/// keeps going: registry and disk trouble show in `status`, never end it.
///
/// Services run together; on SIGTERM/SIGINT they stop in reverse order: capture first, then the control
/// socket, the engine (which drains the ring and commits what is left), then the refresher and the posters.
public struct Daemon: Sendable {
    public var configuration: DaemonConfiguration
    /// Capture files to replay instead of a radio.
    public var replay: [String] = []
    public var speed: Double = 1
    public var exitWhenDrained = false
    public var environment: [String: String] = [:]
    /// Reads the configuration again, for SIGHUP: the configuration and its errors.
    public var reloadConfiguration: @Sendable () -> (DaemonConfiguration, [String]) = { (DaemonConfiguration(), []) }
    /// Called for each sighting as the engine makes it (the demo prints them).
    public var onSighting: @Sendable (Sighting) -> Void = { _ in }
    /// Adverts the ring holds; 16,384 is 2.5 s of a saturated Pi UART in 640 KiB.
    public var ringCapacity = 16_384
    /// The station's clocks, which every part reads: the system's, or a test's.
    public var clock = StationClock.system
    /// Sinks beyond the ones the configuration names (for an embedder, or a test's own): each gets a line of the
    /// outbox and a poster, as the registry and MQTT do.
    public var additionalSinks: [any SightingSink] = []

    public init(configuration: DaemonConfiguration) { self.configuration = configuration }

    /// A start-up problem: what went wrong, and the sysexits(3) status to leave with.
    public struct StartError: Error, CustomStringConvertible {
        public var description: String
        public var exitCode: Int32
    }

    /// Runs until SIGTERM/SIGINT (or, with `exitWhenDrained`, until the replay is over and the outbox empty).
    /// Returns the process exit status.
    public func run(logger: Logger) async -> Int32 {
        let parts: Parts
        do {
            parts = try await start(logger: logger)
        } catch let error as StartError {
            logger.critical("\(error.description)")
            return error.exitCode
        } catch {
            logger.critical("cannot start: \(error)")
            return 1
        }
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: parts.services,
                gracefulShutdownSignals: [.sigterm, .sigint],
                cancellationSignals: [],
                logger: logger))
        do {
            try await group.run()
        } catch {
            logger.critical("stopped on an error", metadata: ["error": "\(error)"])
            await parts.close(logger: logger)
            return 1
        }
        await parts.close(logger: logger)
        if parts.capture.status.current.state == .failed { return 1 }
        logger.info("stopped cleanly")
        return 0
    }

    struct Parts {
        var services: [ServiceGroupConfiguration.ServiceConfiguration]
        var capture: any CaptureSource
        var clients: HTTPClients
        var outbox: Outbox
        var mqtt: MQTTStation?

        /// Once every service has stopped: MQTT (saying offline), the HTTP client, then the outbox (checkpointed into
        /// one file).
        func close(logger: Logger) async {
            await mqtt?.stop()
            await clients.shutdown()
            do {
                try outbox.close()
            } catch {
                logger.warning(
                    "outbox not closed cleanly; SQLite recovers it at the next start", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Opens what the services share, in the order a start should fail in: the state directory, the registry (its
    /// key), MQTT's settings, the outbox with a line per sink, and the capture.
    private func start(logger: Logger) async throws -> Parts {
        let state = configuration.stateDirectory
        do {
            try FileManager.default.createDirectory(
                atPath: state, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o750])
        } catch {
            throw StartError(description: "cannot create the state directory \(state): \(error)", exitCode: 73)
        }
        // From here a failed start shuts the HTTP client down: async-http-client stops the process when one is
        // dropped running.
        let clients = HTTPClients()
        do {
            let registry = SwitchableRegistry(
                try Self.makeRegistry(configuration, environment: environment, clients: clients))
            let mailbox = MissingSetMailbox(MissingBikeSet(regions: configuration.regions))
            let mqtt = try makeMQTT(describe: { mailbox.latest.record(for: $0) }, logger: logger)
            let sinks = self.sinks(registry: registry, mqtt: mqtt)
            let outbox = try openOutbox(path: state + "/outbox.sqlite", sinks: sinks.map(\.id), logger: logger)
            if outbox.abandoned > 0 {
                logger.notice(
                    "sightings owed only to a sink no longer configured (mqtt taken out of the configuration) are not sent",
                    metadata: ["outbox.abandoned": "\(outbox.abandoned)"])
            }
            let shared = Shared(
                registry: registry, mailbox: mailbox, mqtt: mqtt, sinks: sinks, outbox: outbox,
                capture: try makeCapture(logger: logger), clients: clients)
            return try await assemble(shared, logger: logger)
        } catch {
            await clients.shutdown()
            throw error
        }
    }

    /// Every place sightings go: the registry, the broker when MQTT is configured, and any added. A new sink is one
    /// entry here; its line of the outbox, its poster, `status` and `/metrics` follow from it.
    private func sinks(registry: SwitchableRegistry, mqtt: MQTTStation?) -> [any SightingSink] {
        var sinks: [any SightingSink] = [registry]
        if let mqtt { sinks.append(mqtt.sink) }
        return sinks + additionalSinks
    }
}
