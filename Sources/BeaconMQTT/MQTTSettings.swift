/// Where the broker is and how to sign in: what the configuration's `mqtt`, `mqtt-username`, `mqtt-password-file`
/// and `mqtt-ca-file` keys say.
public struct MQTTSettings: Sendable {
    public var host: String
    public var port: Int
    /// mqtts://: TLS, the broker's certificate verified against `caFile`, or the system's store without one.
    public var tls: Bool
    public var caFile: String?
    public var username: String?
    public var password: String?
    public var clientID: String
    /// Seconds between pings when nothing else is sent; the broker ends a connection silent for 1.5 times this.
    public var keepAlive: Int32 = 30
    /// What the broker publishes for the station if its connection ends without a clean disconnection.
    public var will: MQTTMessage?
    /// What the waits between reconnection attempts are timed on.
    public var reconnectClock = ReconnectClock.system

    public init(
        host: String, port: Int, tls: Bool = false, caFile: String? = nil, username: String? = nil,
        password: String? = nil, clientID: String, will: MQTTMessage? = nil
    ) {
        self.host = host
        self.port = port
        self.tls = tls
        self.caFile = caFile
        self.username = username
        self.password = password
        self.clientID = clientID
        self.will = will
    }
}

/// One MQTT message: its topic, its bytes, and whether the broker keeps it for later subscribers.
public struct MQTTMessage: Sendable, Equatable {
    public var topic: String
    public var payload: [UInt8]
    public var retain: Bool

    public init(topic: String, payload: [UInt8], retain: Bool = false) {
        self.topic = topic
        self.payload = payload
        self.retain = retain
    }

    public init(topic: String, text: String, retain: Bool = false) {
        self.init(topic: topic, payload: Array(text.utf8), retain: retain)
    }

    public var text: String { String(decoding: payload, as: UTF8.self) }
}

/// Why an MQTT operation failed, in words for the log and `status`.
public struct MQTTError: Error, CustomStringConvertible, Sendable {
    public var description: String

    public init(_ description: String) { self.description = description }
}
