import AsyncHTTPClient
import BeaconCapture
import BeaconDelivery
import BeaconEngine
import BeaconMQTTStation
import BeaconMetrics
import BeaconOutbox
import BeaconPOSIX
import BeaconRegistryClient
import DaemonSupport
import LockedValue
import Logging
import NIOCore
import StationSettings

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// What `start` and `assemble` open, each a start-up error of its own (a line and an exit status).
extension Daemon {
    /// MQTT's station, when `mqtt` is configured: its client is made (libmosquitto loaded) but not yet connected.
    func makeMQTT(
        describe: @escaping @Sendable (BeaconIdentity) -> BikeRecord?, logger: Logger
    ) throws(StartError) -> MQTTStation? {
        guard let address = configuration.mqtt else { return nil }
        let settings = MQTTStationSettings(
            address: address, stationID: configuration.stationID, prefix: configuration.mqttPrefix,
            caFile: configuration.mqttCAFile, username: configuration.mqttUsername, password: try mqttPassword())
        do {
            return try MQTTStation(settings, logger: logger, describe: describe)
        } catch {
            throw StartError(description: error.description, exitCode: 78)
        }
    }

    /// Connects MQTT in the background, when it is configured.
    static func start(_ mqtt: MQTTStation?) throws(StartError) {
        do {
            try mqtt?.start()
        } catch {
            throw StartError(description: error.description, exitCode: 78)
        }
    }

    /// `mqtt-password-file`'s first line, else the systemd credential `mqtt-password`; nil: none (a broker without
    /// passwords). A trailing newline is not part of the password; nothing of it reaches a log.
    private func mqttPassword() throws(StartError) -> String? {
        guard let path = configuration.mqttPasswordPath(environment: environment) else { return nil }
        do {
            return try SecretFile.firstLine(path: path)
        } catch {
            throw StartError(description: "MQTT password file \(error)", exitCode: 78)
        }
    }

    /// `/metrics`, when `metrics-listen` is set. Refused (the unit's SocketBindAllow=, an address this machine does
    /// not have) is a configuration error; in use, a start that may succeed a little later.
    func serveMetrics(collector: StatusCollector, logger: Logger) async throws -> MetricsServer? {
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
    func openOutbox(path: String, sinks ids: [SinkID], logger: Logger) throws -> Outbox {
        let capacity = configuration.outboxCapacity
        // Every sighting is owed to every sink.
        let sinks = ids.map(\.name)
        do {
            return try Outbox(path: path, capacity: capacity, sinks: sinks)
        } catch  where error.code == .damaged {
            let movedTo: String
            do {
                movedTo = try DamagedFile.moveAside(
                    path, companions: ["-journal", "-wal", "-shm"], wallMilliseconds: clock.wallMilliseconds())
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
    func makeCapture(logger: Logger) throws -> any CaptureSource {
        if !replay.isEmpty {
            do {
                return try ReplayCapture(paths: replay, speed: speed, clock: clock)
            } catch {
                throw StartError(description: "\(error)", exitCode: 2)
            }
        }
        do {
            return try LiveCapture(configuration: configuration, logger: logger, clock: clock)
        } catch {
            throw StartError(description: "\(error)", exitCode: error.exitCode)
        }
    }

    /// The SIGHUP handler: see `ReloadService`.
    func reloader(
        registry: SwitchableRegistry, clients: HTTPClients, refresher: MissingSetRefresher<ContinuousClock>,
        lines: DeliveryLines, logger: Logger
    ) -> @Sendable () async -> Void {
        let running = LockedValue(configuration)
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
                    lines.resume()
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
