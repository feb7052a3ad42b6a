import BeaconDBus

/// What systemd says about beacond.service over the system bus: whether it is installed and running, as whom,
/// with which capabilities, and where its API key credential comes from. Read-only, so any user may ask.
struct ServiceUnitProbe: Sendable {
    static let manager = "org.freedesktop.systemd1"

    var activeState: String
    var subState: String
    /// Why it last stopped: success, exit-code, watchdog, signal, …
    var result: String
    var mainPID: Int
    var execMainStatus: Int
    var user: String
    var ambientCapabilities: UInt64
    var boundingCapabilities: UInt64
    /// `LoadCredential=NAME:SOURCE` pairs.
    var credentials: [String: String]
    var stateDirectories: [String]

    /// nil when systemd does not know the unit (not installed).
    static func probe(unit: String = "beacond.service", on bus: DBusConnection) throws(DBusError) -> ServiceUnitProbe? {
        let reply = try bus.call(
            .methodCall(
                destination: manager, path: "/org/freedesktop/systemd1", interface: manager + ".Manager",
                member: "LoadUnit", [.string(unit)]),
            timeoutMilliseconds: 3_000)
        guard case .objectPath(let path)? = reply.arguments.first else { return nil }
        let unitProperties = try bus.properties(destination: manager, path: path, interface: manager + ".Unit")
        guard unitProperties["LoadState"]?.string == "loaded" else { return nil }
        let service = try bus.properties(destination: manager, path: path, interface: manager + ".Service")
        var credentials: [String: String] = [:]
        if case .array(_, let pairs)? = service["LoadCredential"] {
            for case .structure(let fields) in pairs where fields.count == 2 {
                if let name = fields[0].string, let source = fields[1].string { credentials[name] = source }
            }
        }
        var directories: [String] = []
        if case .array(_, let names)? = service["StateDirectory"] { directories = names.compactMap(\.string) }
        return ServiceUnitProbe(
            activeState: unitProperties["ActiveState"]?.string ?? "unknown",
            subState: unitProperties["SubState"]?.string ?? "unknown",
            result: service["Result"]?.string ?? "unknown", mainPID: service["MainPID"]?.int ?? 0,
            execMainStatus: service["ExecMainStatus"]?.int ?? 0, user: service["User"]?.string ?? "",
            ambientCapabilities: service["AmbientCapabilities"]?.uint64 ?? 0,
            boundingCapabilities: service["CapabilityBoundingSet"]?.uint64 ?? .max, credentials: credentials,
            stateDirectories: directories)
    }

    /// The capabilities the service's process has: all of the bounding set as root, else the ambient ones.
    var effectiveCapabilities: UInt64 {
        user.isEmpty || user == "root" || user == "0"
            ? boundingCapabilities : ambientCapabilities & boundingCapabilities
    }
}
