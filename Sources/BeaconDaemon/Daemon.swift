import AsyncHTTPClient
import BeaconCapture
public import BeaconEngine
import BeaconOutbox
import BeaconPOSIX
import BeaconRegistryClient
import BeaconWire
import DaemonSupport
public import Logging
import NIOCore
import ServiceLifecycle
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
/// socket, the engine (which drains the ring and commits what is left), then the refresher and the poster.
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

    private func start(logger: Logger) async throws -> Parts {
        let configuration = self.configuration
        let state = configuration.stateDirectory
        do {
            try FileManager.default.createDirectory(
                atPath: state, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o750])
        } catch {
            throw StartError(description: "cannot create the state directory \(state): \(error)", exitCode: 73)
        }
        let outbox = try openOutbox(path: state + "/outbox.sqlite", logger: logger)
        if outbox.abandoned > 0 {
            logger.notice(
                "sightings owed only to a sink no longer configured (mqtt taken out of the configuration) are not sent",
                metadata: ["outbox.abandoned": "\(outbox.abandoned)"])
        }
        let capture = try makeCapture(logger: logger)

        // From here a failed start shuts the HTTP client down: async-http-client stops the process when one is
        // dropped running.
        let clients = HTTPClients()
        do {
            return try await assemble(outbox: outbox, capture: capture, clients: clients, logger: logger)
        } catch {
            await clients.shutdown()
            throw error
        }
    }

    /// The services, once the outbox and the capture are open.
    private func assemble(
        outbox: Outbox, capture: any CaptureSource, clients: HTTPClients, logger: Logger
    ) async throws -> Parts {
        let configuration = self.configuration
        let state = configuration.stateDirectory
        let registry = SwitchableRegistry(
            try Self.makeRegistry(configuration, environment: environment, clients: clients))
        let wallClock: @Sendable () -> Int64 = { SystemTime.wallMilliseconds() }
        let mailbox = MissingSetMailbox(MissingBikeSet(regions: configuration.regions))
        let refresher = MissingSetRefresher(
            registry: registry, cache: BikeCache(path: state + "/missing-bikes.json"), regions: configuration.regions,
            mailbox: mailbox,
            clock: ContinuousClock(), interval: .seconds(configuration.refreshInterval), logger: logger,
            wallClock: wallClock)
        if !refresher.loadCache() {
            // Nothing cached (a first start): without a set nothing can be detected, so one attempt at the
            // registry comes first, for half the unit's TimeoutStartSec at most. With a cache, capture starts at
            // once, network or not.
            await refresher.firstRefresh(patience: .seconds(30))
        }
        // Live sightings carry monotonic times, labelled with the wall clock when it is synchronised (SightingClock).
        let runtimeDirectory =
            environment["RUNTIME_DIRECTORY"]?.split(separator: ":").first.map(String.init)
            ?? configuration.controlSocket.lastIndex(of: "/").map { String(configuration.controlSocket[..<$0]) }
            ?? "/run"
        let systemClocks = SystemClocks(runtimeDirectory: runtimeDirectory)
        let clocks: (@Sendable () -> ClockReading)? =
            capture.timeBase == .monotonic ? { @Sendable in systemClocks.reading() } : nil
        let poster = SightingPoster(
            outbox: outbox, sink: registry, clock: ContinuousClock(), logger: logger, wallClock: wallClock,
            systemClocks: clocks,
            clockWait: .seconds(configuration.clockSyncWait))
        // MQTT, when configured: a line of the outbox and a poster of its own, so neither sink holds the other up.
        let mqtt: MQTTStation?
        let mqttPoster: SightingPoster<ContinuousClock>?
        if let address = configuration.mqtt {
            let connected = PosterLink()
            let station = try MQTTStation(
                configuration, address: address, environment: environment, logger: logger,
                describe: { mailbox.latest.record(for: $0) },
                // Off libmosquitto's thread first: the poster's state is for Swift's own threads.
                onConnected: { Task { connected.resume() } })
            let posterForMQTT = SightingPoster(
                outbox: outbox, sink: station.sink, clock: ContinuousClock(), logger: logger, wallClock: wallClock,
                systemClocks: clocks, clockWait: .seconds(configuration.clockSyncWait))
            connected.set(posterForMQTT)
            try station.start()
            (mqtt, mqttPoster) = (station, posterForMQTT)
        } else {
            (mqtt, mqttPoster) = (nil, nil)
        }

        let ring = AdvertRing(capacity: ringCapacity)
        let engine = EngineService(
            configuration: configuration.engineConfiguration,
            location: (configuration.latitude, configuration.longitude), ring: ring,
            capture: capture, mailbox: mailbox, outbox: outbox,
            nudgePoster: {
                poster.nudge()
                mqttPoster?.nudge()
            },
            exitWhenDrained: exitWhenDrained,
            onSighting: onSighting, logger: logger, clocks: clocks)
        let collector = StatusCollector(
            version: ReleaseVersion.current, startedAt: SystemTime.wallMilliseconds(),
            startedMonotonic: SystemTime.monotonicNanoseconds(),
            capture: capture.status, engine: engine.status, refresher: { refresher.status },
            poster: { poster.statistics },
            outbox: outbox, stationBeacon: configuration.stationBeacon, clocks: clocks)

        let metrics: MetricsServer?
        do {
            metrics = try await serveMetrics(collector: collector, logger: logger)
        } catch {
            await mqtt?.stop()
            throw error
        }

        let socketPath = configuration.controlSocket
        let control: ControlServer
        do {
            let directory =
                socketPath.lastIndex(of: "/").map { String(socketPath[..<$0]) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/"
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o750])
            control = try ControlServer(
                path: socketPath, status: { collector.report() }, refresh: { refresher.refreshNow() },
                retryDeadLetters: {
                    Result { () throws(OutboxError) -> Int in
                        let count = try outbox.requeueDeadLetters()
                        poster.resume()
                        mqttPoster?.resume()
                        return count
                    }
                }, logger: logger)
        } catch {
            await mqtt?.stop()
            throw StartError(description: "cannot open the control socket: \(error)", exitCode: 73)
        }

        let notifier = SystemdNotifier(environment: environment)
        let reload = reloader(
            registry: registry, clients: clients, refresher: refresher, poster: poster, logger: logger)
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: StoppableService("poster", stop: { poster.stop() }) { await poster.run() })
        ]
        if let mqttPoster, let mqtt {
            services.append(
                .init(service: StoppableService("mqtt poster", stop: { mqttPoster.stop() }) { await mqttPoster.run() }))
            // Home Assistant's health and sensors: often enough for a dashboard, rarely enough for a Pi.
            services.append(
                .init(
                    service: TaskService("mqtt state") {
                        while !Task.isCancelled {
                            mqtt.publish(collector.report())
                            try? await Task.sleep(for: .seconds(30))
                        }
                    }))
        }
        services += [
            .init(service: TaskService("refresher") { await refresher.run() }),
            .init(
                service: engine, successTerminationBehavior: .gracefullyShutdownGroup,
                failureTerminationBehavior: .gracefullyShutdownGroup),
            .init(service: control),
        ]
        if let metrics { services.append(.init(service: metrics)) }
        services += [
            .init(service: HealthService(collector: collector, notifier: notifier, logger: logger)),
            .init(service: ReloadService(reload: reload)),
            .init(
                service: CaptureService(
                    source: capture, ring: ring,
                    ready: {
                        notifier?.notify(["READY=1", "STATUS=capture running", "MAINPID=\(getpid())"])
                    }, logger: logger),
                failureTerminationBehavior: .gracefullyShutdownGroup),
        ]
        configuration.warnIfKeyTravelsInClear(logger: logger)
        logger.info(
            "beacond started",
            metadata: [
                "version": "\(ReleaseVersion.current)", "station.id": "\(configuration.stationID)",
                "registry": "\(registry.displayName)",
                "state.directory": "\(state)", "control.socket": "\(socketPath)",
                "metrics": "\(configuration.metricsListen.map { "http://\($0)/metrics" } ?? "off")",
            ])
        return Parts(services: services, capture: capture, clients: clients, outbox: outbox, mqtt: mqtt)
    }

    /// `/metrics`, when `metrics-listen` is set. Refused (the unit's SocketBindAllow=, an address this machine does
    /// not have) is a configuration error; in use, a start that may succeed a little later.
    private func serveMetrics(collector: StatusCollector, logger: Logger) async throws -> MetricsServer? {
        guard let address = configuration.metricsListen else { return nil }
        let metrics = DaemonMetrics(version: ReleaseVersion.current)
        do {
            let server = try await MetricsServer.listen(on: address) { metrics.exposition(collector.metricsSample()) }
            if !address.isLoopback {
                logger.warning(
                    "metrics served beyond this machine: anyone who can reach the address can read them",
                    metadata: ["metrics.listen": "\(address)"])
            }
            return server
        } catch let error as IOError where [EACCES, EPERM, EADDRNOTAVAIL].contains(error.errnoCode) {
            throw StartError(
                description:
                    "cannot serve metrics on \(address): \(error) (check metrics-listen; under systemd, the unit's SocketBindAllow=)",
                exitCode: 78)
        } catch {
            throw StartError(description: "cannot serve metrics on \(address): \(error)", exitCode: 69)
        }
    }

    /// The outbox; a damaged one is moved aside (its sightings kept there for whoever looks) and a new one
    /// started, since a daemon that refuses to start detects nothing. Any other failure ends the start.
    private func openOutbox(path: String, logger: Logger) throws -> Outbox {
        let capacity = configuration.outboxCapacity
        // Every sighting goes to the registry, and to the broker when MQTT is configured.
        let sinks = [Outbox.registry] + (configuration.mqtt == nil ? [] : ["mqtt"])
        do {
            return try Outbox(path: path, capacity: capacity, sinks: sinks)
        } catch  where error.code == .damaged {
            let movedTo: String
            do {
                movedTo = try DamagedFile.moveAside(
                    path, companions: ["-journal", "-wal", "-shm"], wallMilliseconds: SystemTime.wallMilliseconds())
            } catch let moveError {
                throw StartError(description: "\(error); cannot move it aside: \(moveError)", exitCode: 73)
            }
            logger.critical(
                "outbox damaged; moved aside, starting with an empty one (its undelivered sightings are in the moved file)",
                metadata: ["error": "\(error)", "outbox.movedTo": "\(movedTo)"])
            do {
                return try Outbox(path: path, capacity: capacity, sinks: sinks)
            } catch {
                throw StartError(description: "\(error)", exitCode: 73)
            }
        } catch {
            throw StartError(description: "\(error)", exitCode: 73)
        }
    }

    /// The replay, or the configured backend on the configured adapters.
    private func makeCapture(logger: Logger) throws -> any CaptureSource {
        if !replay.isEmpty {
            do {
                return try ReplayCapture(paths: replay, speed: speed)
            } catch {
                throw StartError(description: "\(error)", exitCode: 2)
            }
        }
        do {
            return try LiveCapture(configuration: configuration, logger: logger)
        } catch {
            throw StartError(description: "\(error)", exitCode: error.exitCode)
        }
    }

    /// The SIGHUP handler: see `ReloadService`.
    private func reloader(
        registry: SwitchableRegistry, clients: HTTPClients, refresher: MissingSetRefresher<ContinuousClock>,
        poster: SightingPoster<ContinuousClock>, logger: Logger
    ) -> @Sendable () async -> Void {
        let running = Mutex(configuration)
        let reloadConfiguration = self.reloadConfiguration
        let environment = self.environment
        return {
            logger.notice("SIGHUP: reloading the configuration")
            let (candidate, errors) = reloadConfiguration()
            if !errors.isEmpty {
                for error in errors { logger.error("configuration not reloaded: \(error)") }
            } else {
                let current = running.withLock { $0 }
                let changed = candidate.changedKeys(from: current)
                do {
                    registry.replace(with: try Self.makeRegistry(candidate, environment: environment, clients: clients))
                    running.withLock { $0 = candidate }
                    let later = changed.filter { !DaemonConfiguration.reloadableKeys.contains($0) }
                    if !later.isEmpty {
                        logger.warning(
                            "changed keys take effect at the next restart",
                            metadata: ["keys": "\(later.joined(separator: ", "))"])
                    }
                    logger.notice("configuration reloaded", metadata: ["registry": "\(registry.displayName)"])
                    candidate.warnIfKeyTravelsInClear(logger: logger)
                    // A new key or URL may be what held sightings were waiting for.
                    poster.resume()
                } catch {
                    logger.error("configuration not reloaded: \(error)")
                }
            }
            refresher.refreshNow()
        }
    }

    /// The registry a configuration names, with its API key (from `api-key-file`, else the systemd credential
    /// `registry-api-key`).
    static func makeRegistry(
        _ configuration: DaemonConfiguration, environment: [String: String], clients: HTTPClients
    ) throws -> any Registry {
        switch configuration.registryLocation {
        case .file(let bikes, let sightings):
            return FileRegistry(bikes: bikes, sightings: sightings)
        case .http:
            let key: APIKey?
            do throws(RegistryError) {
                key = try configuration.apiKey(environment: environment)
            } catch {
                throw StartError(description: error.message, exitCode: 78)
            }
            let registryConfiguration = RegistryConfiguration(
                location: configuration.registryLocation, authentication: configuration.authentication, apiKey: key,
                stationID: configuration.stationID, latitude: configuration.latitude, longitude: configuration.longitude
            )
            return HTTPRegistry(
                configuration: registryConfiguration, client: clients.client(for: registryConfiguration))
        }
    }
}

/// The one HTTP client the registries share (made when first needed), shut down when the daemon ends.
final class HTTPClients: Sendable {
    private let made = Mutex<HTTPClient?>(nil)

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

/// The MQTT poster, for the client's connection callback, which is made before the poster it resumes. Held weakly:
/// the poster holds the sink, which holds the client, which holds the callback that holds this.
final class PosterLink: Sendable {
    private struct Weak: @unchecked Sendable { weak var poster: SightingPoster<ContinuousClock>? }
    private let poster = Mutex(Weak())

    func set(_ poster: SightingPoster<ContinuousClock>) { self.poster.withLock { $0.poster = poster } }

    /// The broker is (back) there: the held line goes on at once.
    func resume() { poster.withLock { $0.poster }?.resume() }
}
