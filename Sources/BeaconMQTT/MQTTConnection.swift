import BeaconPOSIX
internal import CMosquitto
internal import CMosquittoLoad
import DaemonSupport
import Dispatch
import LockedValue

#if canImport(Glibc)
import Glibc
#endif

/// What `MQTTClient` wraps: libmosquitto's handle, the connection's state and its network thread.
///
/// The network thread holds this object (it runs its methods), and `MQTTClient` holds it and stops it in its deinit,
/// so a client dropped without `stop()` still ends its thread, and the handle is destroyed only once no thread is in
/// libmosquitto. The thread calls `mosquitto_loop`, and reconnects with the backoff `MQTTClient` describes.
/// Not libmosquitto's own thread (`mosquitto_loop_start`): its loop gives up for good on some errors, among them the
/// one OpenSSL 3 reports when a broker's end of a TLS session vanishes (a broker killed or restarted), and a station
/// would then stay off MQTT until restarted.
final class MQTTConnection: @unchecked Sendable {
    typealias Connection = MQTTClient.Connection

    /// `mosquitto` is libmosquitto's handle; `self` is its callbacks' context, valid while the network thread runs
    /// (the thread holds it) and until `deinit`, which runs only once the thread has ended.
    private let mosquitto: OpaquePointer
    private let state = LockedValue(State())
    private let onMessage: @Sendable (MQTTMessage) -> Void
    private let onConnected: @Sendable () -> Void
    private let onChange: @Sendable (Connection) -> Void

    struct State {
        var connection = Connection.connecting
        /// Publishers waiting for their message's PUBACK, by message id.
        var waiting: [Int32: CheckedContinuation<Void, any Error>] = [:]
        /// PUBACKs that came before their publisher began to wait (libmosquitto's thread can be that quick).
        var early: Set<Int32> = []
        var subscriptions: [String] = []
        var started = false
        /// Set by `stop()`: the network thread disconnects and ends.
        var stopping = false
    }

    private let host: String
    private let port: Int32
    private let keepAlive: Int32
    private let reconnectClock: ReconnectClock
    /// What ends the network thread's wait between reconnection attempts early (`stop()`).
    private let wake = DispatchSemaphore(value: 0)
    /// The network thread. It holds this object while it runs (libmosquitto's callbacks, on it, use it unretained).
    private let thread = LoopThread()

    /// See `MQTTClient.init`.
    init(
        _ settings: MQTTSettings, onMessage: @escaping @Sendable (MQTTMessage) -> Void,
        onConnected: @escaping @Sendable () -> Void, onChange: @escaping @Sendable (Connection) -> Void
    ) throws(MQTTError) {
        if let why = beacond_mosquitto_load() { throw MQTTError(String(cString: why)) }
        _ = Self.initialised
        // A clean session: what the station publishes is in its outbox until acknowledged, so the broker need keep
        // nothing for it across connections.
        guard let handle = mosquitto_new(settings.clientID, true, nil) else {
            throw MQTTError("cannot make an MQTT client (out of memory, or a client id libmosquitto refuses)")
        }
        do throws(MQTTError) {
            try Self.configure(handle, settings)
        } catch {
            mosquitto_destroy(handle)
            throw error
        }
        mosquitto = handle
        host = settings.host
        port = Int32(clamping: settings.port)
        keepAlive = settings.keepAlive
        reconnectClock = settings.reconnectClock
        self.onMessage = onMessage
        self.onConnected = onConnected
        self.onChange = onChange
        mosquitto_user_data_set(handle, Unmanaged.passUnretained(self).toOpaque())
    }

    private static func configure(_ handle: OpaquePointer, _ settings: MQTTSettings) throws(MQTTError) {
        try check(
            mosquitto_int_option(handle, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V311), "choose MQTT 3.1.1")
        if let username = settings.username {
            try check(mosquitto_username_pw_set(handle, username, settings.password), "set the username")
        }
        if let will = settings.will {
            try check(
                will.payload.withUnsafeBytes {
                    mosquitto_will_set(handle, will.topic, Int32($0.count), $0.baseAddress, 1, will.retain)
                }, "set the last will")
        }
        if settings.tls {
            // The broker's certificate is verified against `caFile` (or the system's store) and its name against
            // the host: libmosquitto's default, never turned off here.
            try check(
                mosquitto_tls_set(
                    handle, settings.caFile, settings.caFile == nil ? "/etc/ssl/certs" : nil, nil, nil, nil),
                "set up TLS")
        }
        // Other threads publish and subscribe: libmosquitto then wakes the network thread rather than writing itself.
        try check(mosquitto_threaded_set(handle, true), "set up MQTT for threads")
        mosquitto_connect_callback_set(handle) { _, context, code in MQTTConnection.from(context)?.connected(code) }
        mosquitto_disconnect_callback_set(handle) { _, context, code in MQTTConnection.from(context)?.disconnected(code)
        }
        mosquitto_publish_callback_set(handle) { _, context, mid in MQTTConnection.from(context)?.acknowledged(mid) }
        mosquitto_message_callback_set(handle) { _, context, message in
            guard let client = MQTTConnection.from(context), let message = message?.pointee else { return }
            client.received(message)
        }
    }

    deinit {
        mosquitto_destroy(mosquitto)
    }

    /// See `MQTTClient.start()`.
    func start() throws(MQTTError) {
        let first = state.withLock { state in
            defer { (state.started, state.stopping) = (true, false) }
            return !state.started
        }
        guard first else { return }
        let code = mosquitto_connect_async(mosquitto, host, port, keepAlive)
        switch code {
        case MOSQ_ERR_SUCCESS.rawValue: break
        case MOSQ_ERR_INVAL.rawValue: throw MQTTError("cannot connect to \(host):\(port): \(Self.describe(code))")
        // The broker cannot be reached yet (refused, no route, name not resolved, a TLS handshake that failed): the
        // network thread tries again, and the daemon runs on meanwhile.
        default: state.withLock { $0.connection = .lost(Self.describe(code)) }
        }
        thread.start(name: "mqtt") { [self] in network() }
        // A stop() that came while the thread was being made found none to end: this ends it.
        if stopping {
            wake.signal()
            thread.join()
        }
    }

    /// See `MQTTClient.stop()`. Called on the network thread itself (a callback let go of the last `MQTTClient`), it
    /// cannot wait for that thread: the thread ends when the callback returns, and is detached so that nobody need.
    func stop() {
        let started = state.withLock { state in
            defer { (state.started, state.stopping) = (false, true) }
            return state.started
        }
        if started {
            _ = mosquitto_disconnect(mosquitto)
            wake.signal()
            thread.join()
        }
        let waiting = state.withLock { state in
            defer { state.waiting = [:] }
            return state.waiting
        }
        for publisher in waiting.values { publisher.resume(throwing: MQTTError("the MQTT client stopped")) }
    }

    private var stopping: Bool { state.withLock { $0.stopping } }

    /// The network thread: libmosquitto's loop while connected (it wakes at least once a second, for keepalive),
    /// and while not, a reconnection attempt after each wait of the backoff.
    private func network() {
        // The poster's backoff: jittered, so stations that lost one broker together do not all come back together.
        var backoff = Self.reconnectBackoff
        var random = SystemRandomNumberGenerator()
        while !stopping {
            let code = mosquitto_loop(mosquitto, 1_000, 1)
            if code == MOSQ_ERR_SUCCESS.rawValue {
                // The backoff starts again once the broker has accepted the station, not merely the connection: a
                // refused password is tried again ever more slowly.
                if backoff.attempt > 0, connection == .connected { backoff.reset() }
                continue
            }
            guard !stopping else { break }
            // Down: lost, refused, never made, or a TLS or protocol error. Said whether or not the broker had
            // answered yet (a connection that fails before it does would otherwise stay "connecting", with no reason
            // given); a refusal says more than the loop's error, and stands.
            if case .refused = connection {} else { change(to: .lost(Self.describe(code))) }
            while !stopping {
                let delay = backoff.next(using: &random)
                reconnectClock.wait(delay, wake)
                guard !stopping else { break }
                let attempt = mosquitto_reconnect(mosquitto)
                if attempt == MOSQ_ERR_SUCCESS.rawValue { break }
                if case .refused = connection { continue }  // the refusal says more than the failed attempt
                change(to: .lost(Self.describe(attempt)))
            }
        }
        // The DISCONNECT `stop()` queued goes out before the thread ends (two seconds at most).
        let deadline = ContinuousClock.now.advanced(by: .seconds(2))
        while ContinuousClock.now < deadline, mosquitto_loop(mosquitto, 100, 1) == MOSQ_ERR_SUCCESS.rawValue {}
    }

    /// 1–2 s after the first failure, doubling to 30–60 s.
    static let reconnectBackoff = Backoff(base: .seconds(2), cap: .seconds(60))

    var connection: Connection { state.withLock { $0.connection } }

    /// See `MQTTClient.subscribe(_:)`.
    func subscribe(_ pattern: String) {
        state.withLock { $0.subscriptions.append(pattern) }
        if connection == .connected { _ = mosquitto_subscribe(mosquitto, nil, pattern, 1) }
    }

    /// See `MQTTClient.publish(_:within:)`.
    func publish(_ message: MQTTMessage, within timeout: Duration) async throws(MQTTError) {
        var mid: Int32 = 0
        let code = message.payload.withUnsafeBytes {
            mosquitto_publish(mosquitto, &mid, message.topic, Int32($0.count), $0.baseAddress, 1, message.retain)
        }
        guard code == MOSQ_ERR_SUCCESS.rawValue else {
            throw MQTTError("cannot publish on \(message.topic): \(Self.describe(code))")
        }
        do {
            try await acknowledgement(of: mid, within: timeout)
        } catch let error as MQTTError {
            throw error
        } catch {
            throw MQTTError("publishing on \(message.topic): \(error)")
        }
    }

    /// See `MQTTClient.send(_:)`.
    func send(_ message: MQTTMessage) throws(MQTTError) {
        let code = message.payload.withUnsafeBytes {
            mosquitto_publish(mosquitto, nil, message.topic, Int32($0.count), $0.baseAddress, 1, message.retain)
        }
        guard code == MOSQ_ERR_SUCCESS.rawValue else {
            throw MQTTError("cannot publish on \(message.topic): \(Self.describe(code))")
        }
    }

    private func acknowledgement(of mid: Int32, within timeout: Duration) async throws {
        let timer = Task {
            guard (try? await Task.sleep(for: timeout)) != nil else { return }  // cancelled: acknowledged in time
            let waiting = self.state.withLock { $0.waiting.removeValue(forKey: mid) }
            waiting?.resume(throwing: MQTTError("no acknowledgement from the broker within \(timeout)"))
        }
        defer { timer.cancel() }
        try await withCheckedThrowingContinuation { (publisher: CheckedContinuation<Void, any Error>) in
            let acknowledged = state.withLock { state in
                if state.early.remove(mid) != nil { return true }
                state.waiting[mid] = publisher
                return false
            }
            if acknowledged { publisher.resume() }
        }
    }

    // MARK: libmosquitto's callbacks, on its network thread

    private static func from(_ context: UnsafeMutableRawPointer?) -> MQTTConnection? {
        context.map { Unmanaged<MQTTConnection>.fromOpaque($0).takeUnretainedValue() }
    }

    private func connected(_ code: Int32) {
        guard code == 0 else {
            change(to: .refused(String(cString: mosquitto_connack_string(code))))
            return
        }
        change(to: .connected)
        let subscriptions = state.withLock { $0.subscriptions }
        for pattern in subscriptions { _ = mosquitto_subscribe(mosquitto, nil, pattern, 1) }
        onConnected()
    }

    private func disconnected(_ code: Int32) {
        // A refusal stays the reason: the disconnection that follows it says less.
        if case .refused = connection { return }
        change(to: code == 0 ? .lost("disconnected") : .lost(Self.describe(code)))
    }

    /// Sets the connection's state, and tells `onChange` when it is a new one.
    private func change(to connection: Connection) {
        let changed = state.withLock { state in
            defer { state.connection = connection }
            return state.connection != connection
        }
        if changed { onChange(connection) }
    }

    private func acknowledged(_ mid: Int32) {
        let publisher = state.withLock { state in
            guard let publisher = state.waiting.removeValue(forKey: mid) else {
                state.early.insert(mid)
                return nil as CheckedContinuation<Void, any Error>?
            }
            return publisher
        }
        publisher?.resume()
    }

    private func received(_ message: mosquitto_message) {
        guard let topic = message.topic else { return }
        let payload =
            message.payload.map { [UInt8](UnsafeRawBufferPointer(start: $0, count: Int(message.payloadlen))) } ?? []
        onMessage(MQTTMessage(topic: String(cString: topic), payload: payload, retain: message.retain))
    }

    private static func describe(_ code: Int32) -> String { String(cString: mosquitto_strerror(code)) }

    private static func check(_ code: Int32, _ doing: String) throws(MQTTError) {
        guard code == MOSQ_ERR_SUCCESS.rawValue else { throw MQTTError("cannot \(doing): \(Self.describe(code))") }
    }

    /// `mosquitto_lib_init` once per process (it sets up libmosquitto's TLS and random source).
    private static let initialised: Bool = {
        _ = mosquitto_lib_init()
        return true
    }()
}
