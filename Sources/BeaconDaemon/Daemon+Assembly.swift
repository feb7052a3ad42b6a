import BeaconCapture
import BeaconControl
import BeaconDelivery
import BeaconEngine
import BeaconMQTTStation
import BeaconMetrics
import BeaconOutbox
import BeaconPOSIX
import BeaconRegistryClient
import DaemonSupport
import Logging
import ServiceLifecycle
import StationSettings

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

extension Daemon {
    /// What `start` opened, for the services to share.
    struct Shared {
        var registry: SwitchableRegistry
        var mailbox: MissingSetMailbox
        var mqtt: MQTTStation?
        var sinks: [any SightingSink]
        var outbox: Outbox
        var capture: any CaptureSource
        var clients: HTTPClients
    }

    /// The services, once the outbox and the capture are open.
    func assemble(_ shared: Shared, logger: Logger) async throws -> Parts {
        let notifier = SystemdNotifier(environment: environment)
        let refresher = await makeRefresher(shared, notifier: notifier, logger: logger)
        // Live sightings carry monotonic times, labelled with the wall clock when it is synchronised (SightingClock).
        let clocks = systemClocks(for: shared.capture)
        let lines = DeliveryLines(
            sinks: shared.sinks, outbox: shared.outbox, logger: logger,
            wallClock: { [clock] in clock.wallMilliseconds() },
            systemClocks: clocks, clockWait: .seconds(configuration.clockSyncWait))
        try Self.start(shared.mqtt)
        let ring = AdvertRing(capacity: ringCapacity)
        let engine = EngineService(
            configuration: configuration.engineConfiguration,
            location: (configuration.latitude, configuration.longitude), ring: ring,
            capture: shared.capture, mailbox: shared.mailbox, outbox: shared.outbox, nudgePoster: { lines.nudge() },
            exitWhenDrained: exitWhenDrained, onSighting: onSighting, logger: logger, clock: clock, clocks: clocks)
        let collector = StatusCollector(
            version: ReleaseVersion.current, startedAt: clock.wallMilliseconds(),
            startedMonotonic: clock.monotonicNanoseconds(), clock: clock,
            capture: shared.capture.status, engine: engine.status, refresher: { refresher.status },
            delivery: { lines.statistics },
            outbox: shared.outbox, stationBeacon: configuration.stationBeacon, clocks: clocks)
        let metrics: MetricsServer?
        let control: ControlServer
        do {
            metrics = try await serveMetrics(collector: collector, logger: logger)
            control = try openControl(collector: collector, refresher: refresher, lines: lines, shared, logger: logger)
        } catch {
            await shared.mqtt?.stop()
            throw error
        }
        let reload = reloader(
            registry: shared.registry, clients: shared.clients, refresher: refresher, lines: lines, logger: logger)
        var services = lines.services
        if let mqtt = shared.mqtt { services.append(Self.mqttState(mqtt, collector: collector)) }
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
                    source: shared.capture, ring: ring,
                    ready: { notifier?.notify(["READY=1", "STATUS=capture running", "MAINPID=\(getpid())"]) },
                    logger: logger),
                failureTerminationBehavior: .gracefullyShutdownGroup),
        ]
        logStarted(shared, logger: logger)
        return Parts(
            services: services, capture: shared.capture, clients: shared.clients, outbox: shared.outbox,
            mqtt: shared.mqtt)
    }

    /// The refresher, with a set to match against before capture starts: the cached one, or (on a first start,
    /// with nothing cached) one attempt at the registry, for half the unit's TimeoutStartSec at most; without a set
    /// nothing can be detected. With a cache, capture starts at once, network or not; systemd is given more time
    /// while a large cache loads on a slow CPU (StartExtension).
    private func makeRefresher(
        _ shared: Shared, notifier: SystemdNotifier?, logger: Logger
    ) async -> MissingSetRefresher<ContinuousClock> {
        let refresher = MissingSetRefresher(
            registry: shared.registry, cache: BikeCache(path: configuration.stateDirectory + "/missing-bikes.json"),
            regions: configuration.regions, mailbox: shared.mailbox, clock: ContinuousClock(),
            interval: .seconds(configuration.refreshInterval), logger: logger,
            wallClock: { [clock] in clock.wallMilliseconds() })
        var more = StartExtension(notifier: notifier, clock: ContinuousClock())
        let loaded = refresher.loadCache { read in
            more.progress("loading the cached bike list: \(read / 1_048_576) MiB read")
        }
        if !loaded { await refresher.firstRefresh(patience: .seconds(30)) }
        return refresher
    }

    /// The system's clocks, for live capture (its times are monotonic); nil for a replay, whose times are wall
    /// times already.
    private func systemClocks(for capture: any CaptureSource) -> (@Sendable () -> ClockReading)? {
        guard capture.timeBase == .monotonic else { return nil }
        let runtimeDirectory =
            environment["RUNTIME_DIRECTORY"]?.split(separator: ":").first.map(String.init)
            ?? configuration.controlSocket.lastIndex(of: "/").map { String(configuration.controlSocket[..<$0]) }
            ?? "/run"
        let systemClocks = SystemClocks(runtimeDirectory: runtimeDirectory, clock: clock)
        return { @Sendable in systemClocks.reading() }
    }

    /// The control socket: status, a refresh now, and dead letters back into every sink's line.
    private func openControl(
        collector: StatusCollector, refresher: MissingSetRefresher<ContinuousClock>, lines: DeliveryLines,
        _ shared: Shared, logger: Logger
    ) throws -> ControlServer {
        let socketPath = configuration.controlSocket
        let outbox = shared.outbox
        do {
            let directory =
                socketPath.lastIndex(of: "/").map { String(socketPath[..<$0]) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/"
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o750])
            return try ControlServer(
                path: socketPath, status: { collector.report() }, refresh: { refresher.refreshNow() },
                retryDeadLetters: {
                    Result { () throws -> Int in
                        let count = try outbox.requeueDeadLetters()
                        lines.resume()
                        return count
                    }
                }, logger: logger)
        } catch {
            throw StartError(description: "cannot open the control socket: \(error)", exitCode: 73)
        }
    }

    /// Home Assistant's health and sensors: often enough for a dashboard, rarely enough for a Pi.
    private static func mqttState(
        _ mqtt: MQTTStation, collector: StatusCollector
    ) -> ServiceGroupConfiguration.ServiceConfiguration {
        .init(
            service: TaskService("mqtt state") {
                while !Task.isCancelled {
                    mqtt.publish(collector.report())
                    try? await Task.sleep(for: .seconds(30))
                }
            })
    }

    private func logStarted(_ shared: Shared, logger: Logger) {
        configuration.warnIfKeyTravelsInClear(logger: logger)
        logger.info(
            "beacond started",
            metadata: [
                "version": "\(ReleaseVersion.current)", "station.id": "\(configuration.stationID)",
                "registry": "\(shared.registry.displayName)",
                "sinks": "\(shared.sinks.map(\.id.name).joined(separator: ","))",
                "state.directory": "\(configuration.stateDirectory)",
                "control.socket": "\(configuration.controlSocket)",
                "metrics": "\(configuration.metricsListen.map { "http://\($0)/metrics" } ?? "off")",
            ])
    }
}
