import BeaconDelivery
import BeaconEngine
import BeaconOutbox
import BeaconRegistryClient
import BeaconTestSupport
import Foundation
import InMemoryLogging
import Logging
import RegistryTestServer
import StationSettings

/// The key the test registry demands; no log line, error or status may ever contain it.
let secretKey = "k3y-SECRET-0123456789"

/// `count` enter sightings and their exits, from the engine itself.
func makeSightings(_ count: Int) -> [Sighting] {
    var harness = EngineHarness(missingMinors: (0..<UInt16(count)).map { $0 })
    for minor in 0..<UInt16(count) { harness.hear(minor: minor, at: Double(minor)) }
    harness.finish()
    return harness.sightings
}

func items(_ sightings: [Sighting]) -> [OutboxItem] {
    sightings.map { OutgoingSighting.outboxItem($0, stationID: "cafe-1", latitude: 51.5, longitude: -0.12) }
}

func milliseconds() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

func httpConfiguration(_ server: RegistryServer, authentication: RegistryConfiguration.Authentication = .query)
    -> RegistryConfiguration
{
    RegistryConfiguration(
        location: .http(base: server.baseURL), authentication: authentication, apiKey: APIKey(secretKey),
        stationID: "cafe-1", latitude: 51.5, longitude: -0.12, connectTimeout: .seconds(5),
        requestTimeout: .seconds(8), listTimeout: .seconds(8), maximumResponseBytes: 64 * 1024)
}

/// A logger whose lines the test can read.
func capturingLogger() -> (Logger, InMemoryLogHandler) {
    let handler = InMemoryLogHandler()
    var logger = Logger(label: "test") { _ in handler }
    logger.logLevel = .trace
    return (logger, handler)
}

func logText(_ handler: InMemoryLogHandler) -> String {
    handler.entries.map { "\($0.message) \($0.metadata)" }.joined(separator: "\n")
}
