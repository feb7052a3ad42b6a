import BeaconDBus
import BeaconPOSIX
public import BeaconWire

#if canImport(Glibc)
import Glibc
#endif

/// Capture while bluetoothd owns the radio. bluetoothd is asked over D-Bus to scan (`BlueZScan`); the
/// adverts come either from the kernel's HCI monitor channel (`monitor`: every report, byte for byte,
/// needs CAP_NET_RAW) or from D-Bus itself (`dbus`: no raw socket at all, but only what BlueZ exposes: a
/// device's manufacturer data and RSSI when a device appears, when those change, or when the monitor
/// matches; see docs/station.md for what that loses). Each adapter has a stall watchdog, and an adapter that leaves
/// bluetoothd (unplugged) is taken up again when it comes back.
public final class BlueZCapture {
    public enum Mode: String, Sendable {
        case monitor, dbus
    }

    /// One configured adapter, its scan and its watch; `scanning` false while it is away or not yet restarted.
    final class AdapterSlot {
        let watch: AdapterWatch
        let scan: BlueZScan
        var scanning = false
        var recovery: AdapterRecovery!
        var name: String { watch.name }

        init(name: String, scan: BlueZScan, settings: CaptureSettings, now: Int64) {
            watch = AdapterWatch(name: name, settings: settings, now: now)
            self.scan = scan
        }
    }

    /// A device's D-Bus properties as far as the `dbus` mode needs them.
    struct Device {
        var random = false
        var manufacturerData: [(company: UInt16, data: [UInt8])] = []
        var rssi: Int8?
    }

    public let mode: Mode
    private let settings: CaptureSettings
    private let onReport: (AdapterReport) -> Void
    private let bus: DBusConnection
    private let monitor: MonitorSocket?
    private let slots: [AdapterSlot]
    private var devices: [String: Device] = [:]
    private let packets = PacketBatch(capacity: CaptureSettings.packetsPerRead)
    private var roundTime: Int64
    /// The monitor channel (first, when there is one) and the bus, for poll(2); built once.
    private var pollers: [pollfd] = []
    /// Synthesised reports waiting to be handed on (D-Bus messages arrive inside calls, not only in `poll`).
    private var pending: [(adapter: UInt16, report: [UInt8])] = []

    /// Connects to bluetoothd (and, for `monitor`, opens the monitor channel) and checks every adapter is
    /// known to it; scanning starts with `start`.
    public init(
        mode: Mode, adapters: [String], regions: [BeaconRegion], settings: CaptureSettings,
        onReport: @escaping (AdapterReport) -> Void = { _ in }
    ) throws(HCIError) {
        self.mode = mode
        self.settings = settings
        self.onReport = onReport
        monitor = mode == .monitor ? try MonitorSocket() : nil
        do {
            bus = try DBusConnection.system()
        } catch {
            throw HCIError(
                .noAdapter, "cannot reach bluetoothd on the system bus (is bluetooth.service running?): \(error)")
        }
        roundTime = settings.clock.monotonicNanoseconds()
        var slots: [AdapterSlot] = []
        for adapter in adapters {
            let index = try HCISocket.deviceID(named: adapter)
            slots.append(
                AdapterSlot(
                    name: adapter, scan: BlueZScan(index: index, regions: regions), settings: settings,
                    now: roundTime))
        }
        self.slots = slots
        if let monitor { pollers.append(pollfd(fd: monitor.descriptor, events: Int16(POLLIN), revents: 0)) }
        if let fd = bus.fileDescriptor { pollers.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0)) }
        do {
            // Adapters leaving and joining bluetoothd, and (dbus mode) what devices say.
            try bus.addMatch("type='signal',sender='org.bluez',interface='org.freedesktop.DBus.ObjectManager'")
            // bluetoothd itself restarting (an upgrade): its monitors and discovery sessions are gone with it.
            try bus.addMatch("type='signal',sender='org.freedesktop.DBus',member='NameOwnerChanged',arg0='org.bluez'")
            if mode == .dbus {
                try bus.addMatch(
                    "type='signal',sender='org.bluez',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',arg0='org.bluez.Device1'"
                )
            }
        } catch {
            throw HCIError(.io, "cannot subscribe to bluetoothd's signals: \(error)")
        }
        for slot in slots {
            let scan = slot.scan
            scan.onDeviceFound = { [unowned self] path in deviceFound(path) }
            slot.recovery = AdapterRecovery(
                deviceID: scan.index,
                rescan: { [unowned self] () throws(HCIError) in try restart(slot) },
                powerCycle: { [unowned self] () throws(HCIError) in
                    do throws(DBusError) {
                        try scan.setPowered(false, on: bus, serving: dispatch)
                        try scan.setPowered(true, on: bus, serving: dispatch)
                    } catch {
                        throw HCIError(
                            error.name.hasSuffix("AccessDenied") ? .permission : .io,
                            "power-cycling hci\(scan.index) through bluetoothd: \(error)")
                    }
                })
        }
    }

    deinit {
        stop()
    }

    /// Starts bluetoothd scanning on every adapter; returns how, per adapter.
    @discardableResult
    public func start() throws(HCIError) -> [String] {
        var methods: [String] = []
        for slot in slots {
            do throws(DBusError) {
                methods.append(try slot.scan.start(on: bus, serving: dispatch).rawValue)
                slot.scanning = true
            } catch {
                if error.name.hasSuffix("ServiceUnknown") || error.name.hasSuffix("NameHasNoOwner") {
                    throw HCIError(
                        .noAdapter,
                        "bluetoothd is not running (nobody owns org.bluez on the system bus): `sudo systemctl start bluetooth`, or use backend = hci"
                    )
                }
                throw HCIError(
                    error.name.hasSuffix("AccessDenied") ? .permission : .noAdapter, "\(slot.name): \(error)")
            }
        }
        roundTime = settings.clock.monotonicNanoseconds()
        for slot in slots { slot.watch.restarted(now: roundTime) }
        return methods
    }

    public func stop() {
        for slot in slots where slot.scanning {
            slot.scanning = false
            slot.scan.stop(on: bus, serving: dispatch)
        }
    }

    /// Liveness evidence for `adapter` when the settings say adverts alone are not enough.
    public func heard(adapter: UInt16?) {
        for slot in slots where slot.scan.index == adapter { slot.watch.lastHeard = roundTime }
    }

    /// Waits up to `timeoutMilliseconds`, hands every advertising event to `body` (borrowed), answers
    /// bluetoothd, runs the watchdogs. Returns how many events were handed on.
    @discardableResult
    public func poll(timeoutMilliseconds: Int32, _ body: (CaptureRecord) throws -> Void) throws -> Int {
        let ready = try AdapterWatch.poll(
            &pollers, timeoutMilliseconds: timeoutMilliseconds, now: settings.clock.monotonicNanoseconds(),
            watching: slots.lazy.filter(\.scanning).map(\.watch))
        roundTime = settings.clock.monotonicNanoseconds()
        var count = 0
        if let monitor, ready > 0, pollers[0].revents != 0 {
            settings.clock.pause(settings.gatherMilliseconds)
            roundTime = settings.clock.monotonicNanoseconds()
            count += try readMonitor(monitor, body)
        }
        while let message = bus.next(timeoutMilliseconds: 0) { dispatch(message) }
        guard bus.isConnected else { throw HCIError(.io, "the connection to bluetoothd's bus was lost") }
        for (adapter, report) in pending {
            count += 1
            try report.withUnsafeBytes { bytes in
                try body(
                    CaptureRecord(
                        time: CaptureTime(nanosecondsSinceEpoch: roundTime), link: .h4(incoming: true),
                        adapter: adapter, payload: bytes))
            }
            if settings.livenessFromAnyAdvert { heard(adapter: adapter) }
        }
        pending.removeAll(keepingCapacity: true)
        maintain()
        return count
    }

    /// Reads what the monitor channel has (up to a batch), passing on the events of configured adapters.
    /// Short packets (under the 6-byte header) are skipped, not the end of the batch.
    private func readMonitor(_ monitor: MonitorSocket, _ body: (CaptureRecord) throws -> Void) throws -> Int {
        var count = 0
        for _ in 0..<CaptureSettings.readsPerPoll * 4 {
            let received = try monitor.receive(into: packets)
            for packetIndex in 0..<received {
                let packet = packets[packetIndex]
                let (opcode, index, length) = MonitorSocket.header(packet)
                guard opcode == MonitorSocket.Opcode.event.rawValue,
                    let slot = slots.first(where: { $0.scan.index == index })
                else { continue }
                let payload = UnsafeRawBufferPointer(rebasing: packet[6..<(6 + length)])
                if settings.livenessFromAnyAdvert && LEMetaEvent.carriesAdvertisingReports(payload) {
                    slot.watch.lastHeard = roundTime
                }
                count += 1
                try body(
                    CaptureRecord(
                        time: CaptureTime(nanosecondsSinceEpoch: roundTime),
                        link: .monitorFields(adapter: index, opcode: opcode), adapter: index,
                        payload: payload))
            }
            if received < CaptureSettings.packetsPerRead { break }
        }
        return count
    }

    /// Everything that arrives on the bus: calls to the monitor objects, adapters coming and going, and (dbus
    /// mode) device properties.
    private func dispatch(_ message: DBusMessage) {
        for slot in slots where slot.scan.serve(message, on: bus) { return }
        if message.kind == .methodCall {
            bus.send(
                message.error(
                    "org.freedesktop.DBus.Error.UnknownMethod", "nothing here answers \(message.member ?? "")"))
            return
        }
        guard message.kind == .signal, let path = message.path else { return }
        let arguments = message.arguments
        switch (message.interface, message.member) {
        case ("org.freedesktop.DBus.ObjectManager", "InterfacesAdded"):
            interfacesAdded(arguments)
        case ("org.freedesktop.DBus.ObjectManager", "InterfacesRemoved"):
            interfacesRemoved(arguments)
        case ("org.freedesktop.DBus", "NameOwnerChanged"):
            nameOwnerChanged(arguments)
        case ("org.freedesktop.DBus.Properties", "PropertiesChanged"):
            guard mode == .dbus, arguments.first?.string == "org.bluez.Device1",
                let changed = arguments.dropFirst().first
            else { return }
            update(path, with: changed, announce: changed["ManufacturerData"] != nil || changed["RSSI"] != nil)
        default:
            break
        }
    }

    /// An object appeared: an adapter back in bluetoothd, or (dbus mode) a device.
    private func interfacesAdded(_ arguments: [DBusValue]) {
        guard let object = arguments.first?.string, let interfaces = arguments.dropFirst().first else { return }
        if let slot = slots.first(where: { $0.scan.path == object }),
            interfaces[BlueZScan.adapterInterface] != nil, !slot.scanning
        {
            slot.watch.away(now: roundTime, soon: true)  // back: take it up at the next maintenance
        }
        if mode == .dbus, let device = interfaces["org.bluez.Device1"] {
            update(object, with: device, announce: true)
        }
    }

    /// An object went: an adapter bluetoothd lost, or a device.
    private func interfacesRemoved(_ arguments: [DBusValue]) {
        guard let object = arguments.first?.string else { return }
        let names =
            arguments.dropFirst().first.map { value -> [String] in
                if case .array(_, let items) = value { return items.compactMap(\.string) }
                return []
            } ?? []
        if let slot = slots.first(where: { $0.scan.path == object }),
            names.contains(BlueZScan.adapterInterface), slot.scanning
        {
            slot.scanning = false
            slot.watch.away(now: roundTime)
            onReport(
                AdapterReport(
                    adapter: slot.name,
                    event: .gone(HCIError(.noAdapter, "bluetoothd lost hci\(slot.scan.index)"))))
        }
        if names.contains("org.bluez.Device1") { devices[object] = nil }
    }

    /// bluetoothd stopped or restarted: every adapter it had is gone until it is back.
    private func nameOwnerChanged(_ arguments: [DBusValue]) {
        guard arguments.first?.string == BlueZScan.service else { return }
        let owner = arguments.count > 2 ? arguments[2].string ?? "" : ""
        for slot in slots {
            if slot.scanning {
                slot.scanning = false
                slot.scan.forget()
                onReport(
                    AdapterReport(
                        adapter: slot.name,
                        event: .gone(
                            HCIError(.noAdapter, owner.isEmpty ? "bluetoothd stopped" : "bluetoothd restarted"))))
            }
            // Take the adapters up again as soon as the new bluetoothd is there (it may still be starting).
            slot.watch.away(now: roundTime, soon: !owner.isEmpty)
        }
        devices.removeAll()
    }

    /// The monitor matched a device: read its properties once (dbus mode) so the match becomes an advert.
    private func deviceFound(_ path: String) {
        guard mode == .dbus else { return }
        guard
            let reply = try? bus.call(
                .methodCall(
                    destination: BlueZScan.service, path: path, interface: BlueZScan.properties, member: "GetAll",
                    [.string("org.bluez.Device1")]),
                timeoutMilliseconds: 2_000, serving: dispatch),
            let properties = reply.arguments.first
        else { return }
        update(path, with: properties, announce: true)
    }

    /// Folds Device1 properties into what is known of the device; when announced and complete enough,
    /// queues a synthesised advertising report.
    private func update(_ path: String, with properties: DBusValue, announce: Bool) {
        guard let (adapter, address) = BlueZAdvert.device(path: path),
            slots.contains(where: { $0.scan.index == adapter })
        else { return }
        var device = devices[path] ?? Device()
        if let type = properties["AddressType"]?.string { device.random = type == "random" }
        if let rssi = properties["RSSI"]?.int { device.rssi = Int8(clamping: rssi) }
        if let data = properties["ManufacturerData"]?.entries {
            device.manufacturerData = data.compactMap { entry in
                guard let company = entry.key.int, let bytes = entry.value.byteArray else { return nil }
                return (UInt16(truncatingIfNeeded: company), bytes)
            }
        }
        devices[path] = device
        guard announce, !device.manufacturerData.isEmpty,
            let report = BlueZAdvert.report(
                address: address, random: device.random, manufacturerData: device.manufacturerData, rssi: device.rssi)
        else { return }
        pending.append((adapter, report))
    }

    /// The watchdogs, and taking up adapters that came back.
    private func maintain() {
        for slot in slots {
            _ = slot.watch.maintain(
                now: roundTime, recovery: slot.scanning ? slot.recovery : nil,
                takeUp: {
                    guard (try? slot.scan.start(on: bus, serving: dispatch)) != nil else { return nil }
                    slot.scanning = true
                    return slot.scan.method?.rawValue ?? ""
                }, report: onReport)
        }
    }

    /// The ladder's rescan: ask bluetoothd again from scratch.
    private func restart(_ slot: AdapterSlot) throws(HCIError) {
        slot.scan.stop(on: bus, serving: dispatch)
        do throws(DBusError) {
            try slot.scan.start(on: bus, serving: dispatch)
        } catch {
            throw HCIError(.io, "restarting the scan on \(slot.name): \(error)")
        }
    }
}
