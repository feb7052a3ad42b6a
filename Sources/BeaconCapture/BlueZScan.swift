import BeaconDBus
import BeaconWire

/// bluetoothd, asked over D-Bus to keep one adapter scanning for the configured regions. The preferred way
/// is an `org.bluez.AdvertisementMonitor1` whose or-patterns match only those regions: bluetoothd then scans
/// passively with the controller's duplicate filter off. Where the monitor API is missing (bluetoothd
/// without --experimental, or older than 5.56), a discovery session (LE, DuplicateData) does the same job,
/// which lasts as long as beacond's D-Bus connection does.
final class BlueZScan {
    enum Method: String, Sendable {
        case advertisementMonitor = "advertisement monitor"
        case discovery
    }

    static let service = "org.bluez"
    static let adapterInterface = "org.bluez.Adapter1"
    static let monitorInterface = "org.bluez.AdvertisementMonitor1"
    static let monitorManagerInterface = "org.bluez.AdvertisementMonitorManager1"
    static let objectManager = "org.freedesktop.DBus.ObjectManager"
    static let properties = "org.freedesktop.DBus.Properties"

    let index: UInt16
    let patterns: [[UInt8]]
    private(set) var method: Method?
    /// Called with a device's path when bluetoothd says it matched the monitor.
    var onDeviceFound: (String) -> Void = { _ in }

    var path: String { "/org/bluez/hci\(index)" }
    /// The application root registered with RegisterMonitor, and its one monitor.
    var root: String { "/org/beacond/hci\(index)" }
    var monitorPath: String { root + "/monitor0" }

    init(index: UInt16, regions: [BeaconRegion]) {
        self.index = index
        patterns = regions.map(BlueZAdvert.pattern(for:))
    }

    /// Makes sure the adapter is powered and scanning; returns how. `serving` gets the messages that are not
    /// for this scan's objects while a call waits.
    @discardableResult
    func start(on bus: DBusConnection, serving: @escaping (DBusMessage) -> Void) throws(DBusError) -> Method {
        let objects = try Self.managedObjects(on: bus)
        guard let interfaces = objects[path], let adapter = interfaces[Self.adapterInterface] else {
            throw DBusError(
                name: "org.bluez.Error.DoesNotExist",
                message: "bluetoothd has no adapter hci\(index) (is it plugged in? `bluetoothctl list`)")
        }
        let serve = { [self] (message: DBusMessage) in if !self.serve(message, on: bus) { serving(message) } }
        if adapter["Powered"]?.bool == false { try setPowered(true, on: bus, serving: serve) }
        if interfaces[Self.monitorManagerInterface] != nil && !patterns.isEmpty {
            try bus.call(
                .methodCall(
                    destination: Self.service, path: path, interface: Self.monitorManagerInterface,
                    member: "RegisterMonitor", [.objectPath(root)]),
                serving: serve)
            method = .advertisementMonitor
        } else {
            try bus.call(
                .methodCall(
                    destination: Self.service, path: path, interface: Self.adapterInterface,
                    member: "SetDiscoveryFilter",
                    [.properties([("Transport", .string("le")), ("DuplicateData", .bool(true))])]),
                serving: serve)
            try bus.call(
                .methodCall(
                    destination: Self.service, path: path, interface: Self.adapterInterface, member: "StartDiscovery"),
                serving: serve)
            method = .discovery
        }
        return method!
    }

    /// Undoes `start`; errors are returned rather than thrown (on the way out, or before a restart).
    @discardableResult
    func stop(on bus: DBusConnection, serving: @escaping (DBusMessage) -> Void) -> DBusError? {
        guard let method else { return nil }
        self.method = nil
        let serve = { [self] (message: DBusMessage) in if !self.serve(message, on: bus) { serving(message) } }
        do {
            switch method {
            case .advertisementMonitor:
                try bus.call(
                    .methodCall(
                        destination: Self.service, path: path, interface: Self.monitorManagerInterface,
                        member: "UnregisterMonitor", [.objectPath(root)]),
                    serving: serve)
            case .discovery:
                try bus.call(
                    .methodCall(
                        destination: Self.service, path: path, interface: Self.adapterInterface, member: "StopDiscovery"
                    ), serving: serve)
            }
            return nil
        } catch {
            return error
        }
    }

    /// bluetoothd went away, and the registration or session with it: nothing to undo any more.
    func forget() { method = nil }

    func setPowered(_ on: Bool, on bus: DBusConnection, serving: @escaping (DBusMessage) -> Void) throws(DBusError) {
        try bus.call(
            .methodCall(
                destination: Self.service, path: path, interface: Self.properties, member: "Set",
                [.string(Self.adapterInterface), .string("Powered"), .variant(.bool(on))]),
            serving: serving)
    }

    /// Answers bluetoothd's calls to this scan's objects; false for any other message.
    func serve(_ message: DBusMessage, on bus: DBusConnection) -> Bool {
        guard message.kind == .methodCall, let target = message.path, target == root || target == monitorPath else {
            return false
        }
        switch (message.interface, message.member) {
        case (Self.objectManager, "GetManagedObjects"):
            bus.send(
                message.reply([.array(element: "{oa{sa{sv}}}", [.dictEntry(.objectPath(monitorPath), interfaces)])]))
        case (Self.properties, "GetAll"):
            bus.send(message.reply([target == monitorPath ? monitorProperties : .properties([])]))
        case (Self.properties, "Get"):
            let name = message.arguments.dropFirst().first?.string ?? ""
            if let value = monitorProperties[name], target == monitorPath {
                bus.send(message.reply([value]))
            } else {
                bus.send(message.error("org.freedesktop.DBus.Error.InvalidArgs", "no property \(name)"))
            }
        case (Self.monitorInterface, "DeviceFound"):
            bus.send(message.reply())
            if let device = message.arguments.first?.string { onDeviceFound(device) }
        case (Self.monitorInterface, "Activate"), (Self.monitorInterface, "Release"),
            (Self.monitorInterface, "DeviceLost"):
            bus.send(message.reply())
        default:
            bus.send(
                message.error(
                    "org.freedesktop.DBus.Error.UnknownMethod",
                    "\(message.interface ?? "").\(message.member ?? "") is not here"))
        }
        return true
    }

    /// The monitor object as GetManagedObjects lists it: `{AdvertisementMonitor1: {Type, Patterns}}`.
    private var interfaces: DBusValue {
        .array(element: "{sa{sv}}", [.dictEntry(.string(Self.monitorInterface), monitorProperties)])
    }

    private var monitorProperties: DBusValue {
        .properties([
            ("Type", .string("or_patterns")),
            ("Patterns", .array(element: "(yyay)", patterns.map { .structure([.byte(0), .byte(0xFF), .bytes($0)]) })),
        ])
    }

    /// bluetoothd's objects: path → interface → properties.
    static func managedObjects(on bus: DBusConnection) throws(DBusError) -> [String: [String: DBusValue]] {
        let reply = try bus.call(
            .methodCall(destination: service, path: "/", interface: objectManager, member: "GetManagedObjects"))
        var objects: [String: [String: DBusValue]] = [:]
        for (path, interfaces) in reply.arguments.first?.entries ?? [] {
            guard let path = path.string else { continue }
            var byName: [String: DBusValue] = [:]
            for (name, properties) in interfaces.entries ?? [] {
                if let name = name.string { byName[name] = properties }
            }
            objects[path] = byName
        }
        return objects
    }
}
