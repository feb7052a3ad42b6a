/// Read-only questions a client asks the bus and its services: who owns a name, and objects' properties.
extension DBusConnection {
    static let busName = "org.freedesktop.DBus"
    static let busPath = "/org/freedesktop/DBus"
    static let propertiesInterface = "org.freedesktop.DBus.Properties"

    /// Whether some connection owns the well-known `name` (is org.bluez running?).
    public func nameHasOwner(_ name: String) throws(DBusError) -> Bool {
        let reply = try call(
            .methodCall(
                destination: Self.busName, path: Self.busPath, interface: Self.busName, member: "NameHasOwner",
                [.string(name)]))
        return reply.arguments.first?.bool ?? false
    }

    /// The process id of the connection owning `name`, as the bus saw it connect.
    public func processID(ofOwner name: String) throws(DBusError) -> Int32? {
        let reply = try call(
            .methodCall(
                destination: Self.busName, path: Self.busPath, interface: Self.busName,
                member: "GetConnectionUnixProcessID", [.string(name)]))
        return reply.arguments.first?.int.map(Int32.init(truncatingIfNeeded:))
    }

    /// Every property of `interface` on the object, by name (variants unwrapped).
    public func properties(destination: String, path: String, interface: String) throws(DBusError) -> [String:
        DBusValue]
    {
        let reply = try call(
            .methodCall(
                destination: destination, path: path, interface: Self.propertiesInterface, member: "GetAll",
                [.string(interface)]))
        var byName: [String: DBusValue] = [:]
        for (key, value) in reply.arguments.first?.entries ?? [] {
            guard let key = key.string else { continue }
            if case .variant(let inner) = value { byName[key] = inner } else { byName[key] = value }
        }
        return byName
    }
}
