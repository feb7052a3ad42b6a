import BeaconPOSIX
internal import CDBus
internal import CDBusLoad

#if canImport(Glibc)
import Glibc
#endif

/// Why a D-Bus exchange failed: the error's D-Bus name (org.bluez.Error.NotReady, …) and text.
public struct DBusError: Error, CustomStringConvertible, Sendable {
    public var name: String
    public var message: String
    public var description: String { "\(message) (\(name))" }

    public init(name: String, message: String) {
        self.name = name
        self.message = message
    }
}

/// A connection to a bus, used from one thread. Method calls are sent and then answered while the
/// connection keeps serving what else arrives (bluetoothd calls an application's objects back before it
/// answers RegisterMonitor), so nothing here blocks the bus in a way that could deadlock.
public final class DBusConnection: @unchecked Sendable {
    private let raw: OpaquePointer
    /// Incoming method calls and signals that arrived while waiting for a reply, for `next`.
    private var queued: [DBusMessage] = []

    /// The system bus (where bluetoothd lives), on a private connection of beacond's own.
    public static func system() throws(DBusError) -> DBusConnection {
        try DBus.load()
        var error = DBus.Error()
        guard let raw = dbus_bus_get_private(DBUS_BUS_SYSTEM, &error.raw) else {
            throw error.take("connect to the system bus")
        }
        return DBusConnection(raw)
    }

    /// A bus at `address` (a private dbus-daemon in tests), registered with it.
    public static func open(address: String) throws(DBusError) -> DBusConnection {
        try DBus.load()
        var error = DBus.Error()
        guard let raw = dbus_connection_open_private(address, &error.raw) else {
            throw error.take("connect to \(address)")
        }
        guard dbus_bus_register(raw, &error.raw) != 0 else {
            dbus_connection_close(raw)
            dbus_connection_unref(raw)
            throw error.take("register with \(address)")
        }
        return DBusConnection(raw)
    }

    private init(_ raw: OpaquePointer) {
        self.raw = raw
        dbus_connection_set_exit_on_disconnect(raw, 0)
    }

    deinit {
        dbus_connection_close(raw)
        dbus_connection_unref(raw)
    }

    /// The connection's unique name on the bus (":1.42").
    public var uniqueName: String { dbus_bus_get_unique_name(raw).map { String(cString: $0) } ?? "" }

    public var isConnected: Bool { dbus_connection_get_is_connected(raw) != 0 }

    /// The socket, for poll(2) next to other descriptors (then drain with `next(timeoutMilliseconds: 0)`).
    public var fileDescriptor: Int32? {
        var fd: Int32 = -1
        return dbus_connection_get_unix_fd(raw, &fd) != 0 ? fd : nil
    }

    /// Asks the bus for a well-known name (a fake service in tests).
    public func requestName(_ name: String) throws(DBusError) {
        var error = DBus.Error()
        let result = dbus_bus_request_name(raw, name, UInt32(DBUS_NAME_FLAG_DO_NOT_QUEUE), &error.raw)
        guard result == DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER else { throw error.take("own the name \(name)") }
    }

    /// Subscribes to signals matching a rule (`type='signal',sender='org.bluez',…`).
    public func addMatch(_ rule: String) throws(DBusError) {
        var error = DBus.Error()
        dbus_bus_add_match(raw, rule, &error.raw)
        if error.isSet() { throw error.take("subscribe to \(rule)") }
    }

    /// Sends without waiting (replies to incoming calls, signals).
    public func send(_ message: DBusMessage) {
        _ = dbus_connection_send(raw, message.raw, nil)
        dbus_connection_flush(raw)
    }

    /// Calls a method and waits for its answer, handing every other message that arrives meanwhile to
    /// `serve` (which should answer method calls addressed to this side). An error reply is thrown.
    @discardableResult
    public func call(
        _ message: DBusMessage, timeoutMilliseconds: Int32 = 10_000, serving serve: (DBusMessage) -> Void = { _ in }
    ) throws(DBusError) -> DBusMessage {
        var serial: UInt32 = 0
        guard dbus_connection_send(raw, message.raw, &serial) != 0 else {
            throw DBusError(
                name: "org.freedesktop.DBus.Error.NoMemory", message: "cannot send \(message.member ?? "a call")")
        }
        dbus_connection_flush(raw)
        let deadline = SystemTime.monotonicMilliseconds() + Int64(timeoutMilliseconds)
        while true {
            let left = deadline - SystemTime.monotonicMilliseconds()
            guard left > 0 else {
                throw DBusError(
                    name: "org.freedesktop.DBus.Error.Timeout",
                    message: "no answer to \(message.member ?? "a call") within \(timeoutMilliseconds) ms")
            }
            guard let incoming = receive(timeoutMilliseconds: Int32(min(left, 200))) else {
                if !isConnected {
                    throw DBusError(name: "org.freedesktop.DBus.Error.Disconnected", message: "the bus went away")
                }
                continue
            }
            if incoming.replySerial == serial && (incoming.kind == .methodReturn || incoming.kind == .error) {
                if incoming.kind == .error {
                    let text = incoming.arguments.first?.string ?? ""
                    throw DBusError(
                        name: incoming.errorName ?? "", message: "\(message.member ?? "call") failed: \(text)")
                }
                return incoming
            }
            serve(incoming)
        }
    }

    /// The next incoming message, waiting up to the timeout; nil when none came.
    public func next(timeoutMilliseconds: Int32) -> DBusMessage? {
        if !queued.isEmpty { return queued.removeFirst() }
        return receive(timeoutMilliseconds: timeoutMilliseconds)
    }

    private func receive(timeoutMilliseconds: Int32) -> DBusMessage? {
        if let message = dbus_connection_pop_message(raw) { return DBusMessage(taking: message) }
        guard dbus_connection_read_write(raw, timeoutMilliseconds) != 0 else { return nil }
        return dbus_connection_pop_message(raw).map(DBusMessage.init(taking:))
    }
}

enum DBus {
    /// libdbus is loaded on first use (CDBusLoad), and every path into libdbus that does not start from a
    /// connection or a message already made starts here: a machine without it gets this error, not a crash.
    static func load() throws(DBusError) {
        if let why = beacond_dbus_load() {
            throw DBusError(name: "org.freedesktop.DBus.Error.NotSupported", message: String(cString: why))
        }
    }

    /// A libdbus DBusError, freed after use.
    struct Error {
        var raw = CDBus.DBusError()
        init() { dbus_error_init(&raw) }
        mutating func isSet() -> Bool { dbus_error_is_set(&raw) != 0 }

        mutating func take(_ doing: String) -> DBusError {
            defer { dbus_error_free(&raw) }
            let name = raw.name.map { String(cString: $0) } ?? "org.freedesktop.DBus.Error.Failed"
            let text = raw.message.map { String(cString: $0) } ?? "failed"
            return DBusError(name: name, message: "cannot \(doing): \(text)")
        }
    }
}
