import BeaconMQTT
import BeaconPOSIX
import BeaconRegistryClient
import Foundation
import Logging

/// The station's MQTT side, when `mqtt` is configured: the client (libmosquitto, loaded only then), the sink its
/// poster delivers to, and availability: `<prefix>/status` is `online` (retained) after every connection, `offline`
/// (retained) when the daemon stops, and `offline` as the last will, which the broker publishes when the connection
/// ends any other way.
final class MQTTStation: Sendable {
    let client: MQTTClient
    let sink: MQTTSink
    let statusTopic: String
    private let logger: Logger

    /// `onConnected` is told of each (re)connection, to resume the poster's held line at once.
    init(
        _ configuration: DaemonConfiguration, address: MQTTAddress, environment: [String: String], logger: Logger,
        onConnected: @escaping @Sendable () -> Void
    ) throws(Daemon.StartError) {
        let prefix = configuration.mqttPrefix
        statusTopic = prefix + "/status"
        self.logger = logger
        let password = try Self.password(configuration, environment: environment)
        let settings = MQTTSettings(
            host: address.host, port: address.port, tls: address.tls, caFile: configuration.mqttCAFile,
            username: configuration.mqttUsername, password: password,
            clientID: "beacond-\(configuration.stationID)",
            will: MQTTMessage(topic: statusTopic, text: "offline", retain: true))
        let statusTopic = self.statusTopic
        do {
            client = try MQTTClient(
                settings,
                onConnected: { client in
                    // On libmosquitto's thread, which must not wait: queued, and sent before anything published later.
                    try? client.send(MQTTMessage(topic: statusTopic, text: "online", retain: true))
                    onConnected()
                })
        } catch {
            throw Daemon.StartError(description: "cannot set up MQTT: \(error)", exitCode: 78)
        }
        sink = MQTTSink(client: client, topic: prefix + "/sighting", displayName: address.description)
    }

    /// Connects in the background; the daemon runs on while the broker is away.
    func start() throws(Daemon.StartError) {
        do {
            try client.start()
        } catch {
            throw Daemon.StartError(description: "cannot connect to the MQTT broker: \(error)", exitCode: 78)
        }
    }

    /// Says `offline` (retained) and disconnects: after a stop the broker does not keep calling the station online.
    func stop() async {
        if client.connection == .connected {
            do {
                try await client.publish(
                    MQTTMessage(topic: statusTopic, text: "offline", retain: true), within: .seconds(2))
            } catch {
                logger.warning("MQTT: could not say offline before stopping", metadata: ["error": "\(error)"])
            }
        }
        client.stop()
    }

    /// `mqtt-password-file`'s first line, else the systemd credential `mqtt-password`; nil: none (a broker without
    /// passwords). A trailing newline is not part of the password; nothing of it reaches a log.
    static func password(_ configuration: DaemonConfiguration, environment: [String: String]) throws(Daemon.StartError)
        -> String?
    {
        let path: String
        if let file = configuration.mqttPasswordFile {
            path = file
        } else if let directory = environment["CREDENTIALS_DIRECTORY"], !directory.isEmpty,
            FileManager.default.fileExists(atPath: directory + "/mqtt-password")
        {
            path = directory + "/mqtt-password"
        } else {
            return nil
        }
        let bytes: [UInt8]
        do {
            bytes = try WholeFile.read(path: path, limit: 4_096)
        } catch {
            throw Daemon.StartError(description: "MQTT password file \(error)", exitCode: 78)
        }
        let line =
            String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            .first.map { $0.hasSuffix("\r") ? String($0.dropLast()) : String($0) } ?? ""
        guard !line.isEmpty else {
            throw Daemon.StartError(description: "MQTT password file \(path): empty", exitCode: 78)
        }
        return line
    }
}
