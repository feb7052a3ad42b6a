public import BeaconDBus
import BeaconPOSIX

#if canImport(Glibc)
import Glibc
#endif

/// What bluetoothd says over the system bus, for `beacond doctor`: whether it runs, which program it is, and per
/// adapter whether it is powered and offers the advertisement-monitor API (BlueZ 5.66 does only with
/// `--experimental`), which the monitor and dbus backends prefer.
public struct BluetoothdProbe: Sendable {
    public struct Adapter: Sendable, Equatable {
        public var name: String
        public var address: String
        public var powered: Bool
        public var monitorAPI: Bool
    }

    public var running: Bool
    public var processID: Int32?
    /// The program's path, from its command line (`/usr/libexec/bluetooth/bluetoothd`), when /proc shows it.
    public var executable: String?
    public var adapters: [Adapter]

    public static func probe(on bus: DBusConnection) throws(DBusError) -> BluetoothdProbe {
        guard try bus.nameHasOwner(BlueZScan.service) else {
            return BluetoothdProbe(running: false, processID: nil, executable: nil, adapters: [])
        }
        let pid = try? bus.processID(ofOwner: BlueZScan.service)
        var adapters: [Adapter] = []
        for (path, interfaces) in try BlueZScan.managedObjects(on: bus).sorted(by: { $0.key < $1.key }) {
            guard let adapter = interfaces[BlueZScan.adapterInterface], path.hasPrefix("/org/bluez/") else { continue }
            adapters.append(
                Adapter(
                    name: String(path.dropFirst("/org/bluez/".count)), address: adapter["Address"]?.string ?? "",
                    powered: adapter["Powered"]?.bool ?? false,
                    monitorAPI: interfaces[BlueZScan.monitorManagerInterface] != nil))
        }
        return BluetoothdProbe(
            running: true, processID: pid, executable: pid.flatMap(Self.executable(of:)), adapters: adapters)
    }

    /// argv[0] of a process, from /proc/PID/cmdline (readable by anyone where /proc is not mounted hidepid).
    static func executable(of pid: Int32) -> String? {
        guard let bytes = try? WholeFile.read(path: "/proc/\(pid)/cmdline", limit: 4_096) else { return nil }
        let first = bytes.prefix { $0 != 0 }
        return first.first == UInt8(ascii: "/") ? String(decoding: first, as: UTF8.self) : nil
    }
}
