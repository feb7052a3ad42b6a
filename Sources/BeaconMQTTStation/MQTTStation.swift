public import BeaconControl
public import BeaconDelivery
public import BeaconEngine
import BeaconMQTT
import DaemonSupport
import Foundation
public import Logging
public import StationSettings

/// What the station's MQTT side takes from the daemon's configuration (the password already read).
public struct MQTTStationSettings: Sendable {
    public var address: MQTTAddress
    public var stationID: String
    /// Topics are `<prefix>/status`, `<prefix>/sighting`, …
    public var prefix: String
    public var caFile: String?
    public var username: String?
    public var password: String?

    public init(
        address: MQTTAddress, stationID: String, prefix: String, caFile: String?, username: String?, password: String?
    ) {
        self.address = address
        self.stationID = stationID
        self.prefix = prefix
        self.caFile = caFile
        self.username = username
        self.password = password
    }
}

/// Why the station's MQTT side cannot be set up or started (a configuration error, for the daemon's exit status).
public struct MQTTStationError: Error, CustomStringConvertible {
    public let description: String
}

/// The station's MQTT side, when `mqtt` is configured: the client (libmosquitto, loaded only then), the sink its
/// poster delivers to, availability, and Home Assistant's discovery. After every connection, and whenever Home
/// Assistant says it is back (`homeassistant/status` = `online`: brokers and Home Assistant restart, and a station
/// announced only at boot would vanish), the station sends its discovery configs, `online` on `<prefix>/status`
/// and its last health and sensor values, all retained. `offline` (retained) when the daemon stops, and as the last
/// will, which the broker publishes when the connection ends any other way.
public final class MQTTStation: Sendable {
    let client: MQTTClient
    let mqttSink: MQTTSink
    let statusTopic: String
    let discovery: HomeAssistantDiscovery
    private let announcer: Announcer
    private let logger: Logger
    /// Told of each (re)connection: the MQTT poster's resume.
    private let connections: ConnectionListeners

    public init(
        _ settings: MQTTStationSettings, logger: Logger,
        describe: @escaping @Sendable (BeaconIdentity) -> BikeRecord?
    ) throws(MQTTStationError) {
        let connections = ConnectionListeners()
        self.connections = connections
        let address = settings.address
        let prefix = settings.prefix
        let discovery = HomeAssistantDiscovery(
            stationID: settings.stationID, prefix: prefix, version: ReleaseVersion.current)
        self.discovery = discovery
        statusTopic = discovery.availabilityTopic
        self.logger = logger
        let clientSettings = MQTTSettings(
            host: address.host, port: address.port, tls: address.tls, caFile: settings.caFile,
            username: settings.username, password: settings.password,
            clientID: "beacond-\(settings.stationID)",
            will: MQTTMessage(topic: discovery.availabilityTopic, text: "offline", retain: true))
        let announcer = Announcer(discovery)
        self.announcer = announcer
        do {
            client = try MQTTClient(
                clientSettings,
                onMessage: { message in
                    if message.topic == HomeAssistantDiscovery.birthTopic && message.text == "online" {
                        announcer.announce()
                    }
                },
                onConnected: { _ in
                    announcer.announce()
                    connections.connected()
                },
                onChange: { connection in
                    // One line per change, not one per attempt: a wrong password is said once, not every minute.
                    let broker: Logger.Metadata = ["mqtt.broker": "\(address)"]
                    switch connection {
                    case .connected: logger.notice("MQTT connected", metadata: broker)
                    case .refused(let reason):
                        logger.error(
                            "the MQTT broker refuses the station: \(reason) (check mqtt-username and mqtt-password-file); sightings for it wait in the outbox",
                            metadata: broker)
                    case .lost(let reason):
                        logger.warning(
                            "MQTT broker unreachable: \(reason); sightings for it wait in the outbox, retrying",
                            metadata: broker)
                    case .connecting: break
                    }
                })
        } catch {
            throw MQTTStationError(description: "cannot set up MQTT: \(error)")
        }
        announcer.client = client
        client.subscribe(HomeAssistantDiscovery.birthTopic)
        mqttSink = MQTTSink(
            client: client, topic: prefix + "/sighting", displayName: address.description, discovery: discovery,
            describe: describe, connections: connections)
    }

    /// The sink the daemon's MQTT poster delivers to.
    public var sink: any SightingSink { mqttSink }

    /// The daemon's health and sensor values, for Home Assistant (sent now if connected, and again after each
    /// announcement).
    public func publish(_ report: StatusReport) {
        let messages = discovery.state(report)
        announcer.remember(messages)
        guard client.connection == .connected else { return }
        for message in messages { try? client.send(message) }
    }

    /// Connects in the background; the daemon runs on while the broker is away.
    public func start() throws(MQTTStationError) {
        do {
            try client.start()
        } catch {
            throw MQTTStationError(description: "cannot connect to the MQTT broker: \(error)")
        }
    }

    /// Says `offline` (retained) and disconnects: after a stop the broker does not keep calling the station online.
    public func stop() async {
        if client.connection == .connected {
            do {
                try await client.publish(
                    MQTTMessage(topic: statusTopic, text: "offline", retain: true), within: .seconds(2))
            } catch {
                logger.warning("MQTT: could not say offline before stopping", metadata: ["error": "\(error)"])
            }
        }
        client.stop()
        connections.removeAll()
    }
}

/// What the station says after each connection and each birth of Home Assistant, called on libmosquitto's thread
/// (which must not wait: everything is queued with `send`). Behind an NSLock, a pthread mutex, which
/// ThreadSanitizer follows across that thread (see LockedValue). The client is held weakly: it
/// holds the callbacks that hold this, and a cycle would keep the whole station alive past its stop (LeakSanitizer
/// fails the daemon's exit on it).
private final class Announcer: @unchecked Sendable {
    private let lock = NSLock()
    private let discovery: HomeAssistantDiscovery
    private var lastState: [MQTTMessage] = []
    private weak var _client: MQTTClient?

    init(_ discovery: HomeAssistantDiscovery) { self.discovery = discovery }

    var client: MQTTClient? {
        get { lock.withLock { _client } }
        set { lock.withLock { _client = newValue } }
    }

    func remember(_ state: [MQTTMessage]) { lock.withLock { lastState = state } }

    func announce() {
        let (client, state) = lock.withLock { (_client, lastState) }
        guard let client else { return }
        for message in discovery.configs { try? client.send(message) }
        try? client.send(MQTTMessage(topic: discovery.availabilityTopic, text: "online", retain: true))
        for message in state { try? client.send(message) }
    }
}
