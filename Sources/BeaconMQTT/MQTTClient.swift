import LockedValue

/// A connection to an MQTT broker through libmosquitto, loaded on first use (CMosquittoLoad): messages published at
/// QoS 1 and awaited until the broker acknowledges them (PUBACK), subscriptions kept across reconnects, a last will.
///
/// The connection runs on a network thread of its own, which reconnects with backoff (1–2 s doubling to 30–60 s, jittered: `Backoff`) whenever
/// it is down, so a broker that is away or refuses the station's password costs a connection attempt now and then,
/// never a crash loop; `connection` says how it stands. `stop()` disconnects; a client let go without it stops the
/// same way in its deinit (`MQTTConnection`, which the thread holds, says how).
public final class MQTTClient: Sendable {
    /// How the connection stands.
    public enum Connection: Sendable, Equatable {
        case connecting
        case connected
        /// The broker answered the connection and refused it (a wrong password, a client id not allowed).
        case refused(String)
        /// The connection ended or could not be made (the broker away); libmosquitto is trying again.
        case lost(String)
    }

    private let core: MQTTConnection

    /// Loads libmosquitto and sets up a client for `settings`; `start()` connects. `onMessage` gets what arrives on
    /// the subscriptions, `onConnected` is called after each (re)connection, and `onChange` with each new state of the
    /// connection (not again for each attempt that ends the same way), all on the network thread.
    public init(
        _ settings: MQTTSettings, onMessage: @escaping @Sendable (MQTTMessage) -> Void = { _ in },
        onConnected: @escaping @Sendable (MQTTClient) -> Void = { _ in },
        onChange: @escaping @Sendable (Connection) -> Void = { _ in }
    ) throws(MQTTError) {
        // The connection must not hold this client (it would never be let go): its callback gets it weakly.
        let owner = WeakClient()
        core = try MQTTConnection(
            settings, onMessage: onMessage, onConnected: { owner.client.map(onConnected) }, onChange: onChange)
        owner.client = self
    }

    deinit {
        core.stop()
    }

    /// Connects in the background and keeps connecting: the first attempt now, the next ones with backoff on the
    /// network thread. Throws only for what no retry would change (settings libmosquitto cannot use).
    public func start() throws(MQTTError) { try core.start() }

    /// Disconnects cleanly (the broker does not send the last will) and stops the network thread. Publishers still
    /// waiting for an acknowledgement get an error.
    public func stop() { core.stop() }

    public var connection: Connection { core.connection }

    /// Subscribes to `pattern` now if connected, and again after every reconnection (a clean session forgets it).
    public func subscribe(_ pattern: String) { core.subscribe(pattern) }

    /// Publishes at QoS 1 and returns once the broker has acknowledged the message, or throws: not connected,
    /// refused by libmosquitto, or no acknowledgement within `timeout` (libmosquitto sends it again after a
    /// reconnection, so a caller that tries again later may make a duplicate, as QoS 1 allows).
    public func publish(_ message: MQTTMessage, within timeout: Duration) async throws(MQTTError) {
        try await core.publish(message, within: timeout)
    }

    /// Queues a message at QoS 1 without waiting for its acknowledgement (from a callback, which must not wait):
    /// libmosquitto sends it, and again after a reconnection until the broker has it.
    public func send(_ message: MQTTMessage) throws(MQTTError) { try core.send(message) }
}

/// The client, weakly, for the connection's `onConnected`.
private final class WeakClient: @unchecked Sendable {
    private let state = LockedValue<Weak>(Weak())
    private struct Weak { weak var client: MQTTClient? }

    var client: MQTTClient? {
        get { state.withLock { $0.client } }
        set { state.withLock { $0.client = newValue } }
    }
}
