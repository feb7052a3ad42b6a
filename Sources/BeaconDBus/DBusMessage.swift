internal import CDBus

/// One D-Bus message (method call, reply, error or signal), owning its libdbus reference.
public final class DBusMessage: @unchecked Sendable {
    public enum Kind: Sendable {
        case methodCall, methodReturn, error, signal, other
    }

    let raw: OpaquePointer

    init(taking raw: OpaquePointer) { self.raw = raw }

    deinit { dbus_message_unref(raw) }

    /// A method call; throws only when libdbus cannot be loaded.
    public static func methodCall(
        destination: String, path: String, interface: String, member: String, _ arguments: [DBusValue] = []
    ) throws(DBusError) -> DBusMessage {
        try DBus.load()
        let message = DBusMessage(taking: dbus_message_new_method_call(destination, path, interface, member))
        message.append(arguments)
        return message
    }

    /// A signal; throws only when libdbus cannot be loaded.
    public static func signal(path: String, interface: String, member: String, _ arguments: [DBusValue] = [])
        throws(DBusError) -> DBusMessage
    {
        try DBus.load()
        let message = DBusMessage(taking: dbus_message_new_signal(path, interface, member))
        message.append(arguments)
        return message
    }

    /// The reply to this method call.
    public func reply(_ arguments: [DBusValue] = []) -> DBusMessage {
        let message = DBusMessage(taking: dbus_message_new_method_return(raw))
        message.append(arguments)
        return message
    }

    /// An error reply to this method call.
    public func error(_ name: String, _ text: String) -> DBusMessage {
        DBusMessage(taking: dbus_message_new_error(raw, name, text))
    }

    public var kind: Kind {
        switch dbus_message_get_type(raw) {
        case Int32(DBUS_MESSAGE_TYPE_METHOD_CALL): .methodCall
        case Int32(DBUS_MESSAGE_TYPE_METHOD_RETURN): .methodReturn
        case Int32(DBUS_MESSAGE_TYPE_ERROR): .error
        case Int32(DBUS_MESSAGE_TYPE_SIGNAL): .signal
        default: .other
        }
    }

    public var path: String? { dbus_message_get_path(raw).map { String(cString: $0) } }
    public var interface: String? { dbus_message_get_interface(raw).map { String(cString: $0) } }
    public var member: String? { dbus_message_get_member(raw).map { String(cString: $0) } }
    public var sender: String? { dbus_message_get_sender(raw).map { String(cString: $0) } }
    public var errorName: String? { dbus_message_get_error_name(raw).map { String(cString: $0) } }
    public var serial: UInt32 { dbus_message_get_serial(raw) }
    public var replySerial: UInt32 { dbus_message_get_reply_serial(raw) }

    /// Whether this is `member` of `interface`.
    public func isCall(_ interface: String, _ member: String) -> Bool {
        kind == .methodCall && self.interface == interface && self.member == member
    }

    public func isSignal(_ interface: String, _ member: String) -> Bool {
        kind == .signal && self.interface == interface && self.member == member
    }

    // MARK: Writing

    public func append(_ values: [DBusValue]) {
        var iterator = DBusMessageIter()
        dbus_message_iter_init_append(raw, &iterator)
        for value in values { Self.write(value, into: &iterator) }
    }

    private static func write(_ value: DBusValue, into iterator: inout DBusMessageIter) {
        // Only plain values: D-Bus copies the bytes behind the pointer.
        func basic<T: BitwiseCopyable>(_ type: Character, _ value: T) {
            var copy = value
            _ = dbus_message_iter_append_basic(&iterator, Int32(type.asciiValue!), &copy)
        }
        func container(_ type: Character, _ signature: String?, _ body: (inout DBusMessageIter) -> Void) {
            var child = DBusMessageIter()
            _ = dbus_message_iter_open_container(&iterator, Int32(type.asciiValue!), signature, &child)
            body(&child)
            _ = dbus_message_iter_close_container(&iterator, &child)
        }
        switch value {
        case .byte(let v): basic("y", v)
        case .bool(let v): basic("b", dbus_bool_t(v ? 1 : 0))
        case .int16(let v): basic("n", v)
        case .uint16(let v): basic("q", v)
        case .int32(let v): basic("i", v)
        case .uint32(let v): basic("u", v)
        case .int64(let v): basic("x", v)
        case .uint64(let v): basic("t", v)
        case .double(let v): basic("d", v)
        case .string(let v), .objectPath(let v), .signature(let v):
            let type: Character = if case .string = value { "s" } else if case .objectPath = value { "o" } else { "g" }
            v.withCString { pointer in
                var text: UnsafePointer<CChar>? = pointer
                _ = dbus_message_iter_append_basic(&iterator, Int32(type.asciiValue!), &text)
            }
        case .array(let element, let items):
            container("a", element) { child in for item in items { write(item, into: &child) } }
        case .dictEntry(let key, let entry):
            container("e", nil) { child in
                write(key, into: &child)
                write(entry, into: &child)
            }
        case .structure(let fields):
            container("r", nil) { child in for field in fields { write(field, into: &child) } }
        case .variant(let inner):
            container("v", inner.signature) { child in write(inner, into: &child) }
        }
    }

    // MARK: Reading

    /// The message's arguments, read whole.
    public var arguments: [DBusValue] {
        var iterator = DBusMessageIter()
        guard dbus_message_iter_init(raw, &iterator) != 0 else { return [] }
        return Self.readAll(&iterator)
    }

    private static func readAll(_ iterator: inout DBusMessageIter) -> [DBusValue] {
        var values: [DBusValue] = []
        while dbus_message_iter_get_arg_type(&iterator) != 0 {  // DBUS_TYPE_INVALID
            if let value = read(&iterator) { values.append(value) }
            dbus_message_iter_next(&iterator)
        }
        return values
    }

    private static func read(_ iterator: inout DBusMessageIter) -> DBusValue? {
        func basic<T: BitwiseCopyable>(_ zero: T) -> T {
            var value = zero
            dbus_message_iter_get_basic(&iterator, &value)
            return value
        }
        func children() -> [DBusValue] {
            var child = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &child)
            return readAll(&child)
        }
        let type = UInt8(truncatingIfNeeded: dbus_message_iter_get_arg_type(&iterator))
        switch Character(UnicodeScalar(type)) {
        case "y": return .byte(basic(UInt8(0)))
        case "b": return .bool(basic(dbus_bool_t(0)) != 0)
        case "n": return .int16(basic(Int16(0)))
        case "q": return .uint16(basic(UInt16(0)))
        case "i", "h": return .int32(basic(Int32(0)))
        case "u": return .uint32(basic(UInt32(0)))
        case "x": return .int64(basic(Int64(0)))
        case "t": return .uint64(basic(UInt64(0)))
        case "d": return .double(basic(Double(0)))
        case "s", "o", "g":
            let pointer = basic(UnsafePointer<CChar>?.none)
            let text = pointer.map { String(cString: $0) } ?? ""
            return type == UInt8(ascii: "s")
                ? .string(text) : type == UInt8(ascii: "o") ? .objectPath(text) : .signature(text)
        case "a":
            let element =
                dbus_message_iter_get_signature(&iterator).map { pointer -> String in
                    defer { dbus_free(pointer) }
                    return String(String(cString: pointer).dropFirst())
                } ?? ""
            return .array(element: element, children())
        case "e":
            let pair = children()
            return pair.count == 2 ? .dictEntry(pair[0], pair[1]) : nil
        case "r": return .structure(children())
        case "v": return children().first.map(DBusValue.variant)
        default: return nil
        }
    }
}
