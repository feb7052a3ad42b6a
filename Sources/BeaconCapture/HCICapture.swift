import BeaconPOSIX
public import BeaconWire

#if canImport(Glibc)
import Glibc
#endif

/// Live capture from one or more adapters through raw HCI sockets: passive scanning on each, every event
/// read into one reused batch of buffers and handed on as a `CaptureRecord` stamped with the monotonic clock, read once per
/// round (the wall clock can be stepped under a running daemon; see `LiveCapture.timeBase`). Each adapter
/// has its own stall watchdog (`RecoveryLadder`) and survives going away: a read that says the device is
/// gone closes it, and it is opened again by its configured name or address every couple of seconds until
/// it is back (a USB dongle unplugged and plugged in again).
public final class HCICapture {
    /// An adapter that is there: its socket, its scan, the steps that recover it.
    struct Open {
        let socket: HCISocket
        let scanner: HCIScanner
        let recovery: AdapterRecovery
    }

    /// One configured adapter: open, or away (`open` nil), and its watch.
    final class AdapterSlot {
        let watch: AdapterWatch
        var open: Open?
        var name: String { watch.name }

        init(name: String, open: Open, settings: CaptureSettings, now: Int64) {
            watch = AdapterWatch(name: name, settings: settings, now: now)
            self.open = open
        }
    }

    private let settings: CaptureSettings
    private let slots: [AdapterSlot]
    private let onReport: (AdapterReport) -> Void
    private let openManagement: () throws(HCIError) -> MgmtSocket
    private let rfkillPath: String
    private let packets = PacketBatch(capacity: CaptureSettings.packetsPerRead)
    private var pollers: [pollfd] = []
    private var polled: [AdapterSlot] = []
    /// Monotonic time of the current poll round: one clock read per round, not per advert.
    private var roundTime: Int64

    /// Opens every adapter (by name or address); the first that cannot be opened is the error, so a daemon
    /// never starts without the radio it was told to use.
    public init(adapters: [String], settings: CaptureSettings, onReport: @escaping (AdapterReport) -> Void = { _ in })
        throws(HCIError)
    {
        self.settings = settings
        self.onReport = onReport
        openManagement = { () throws(HCIError) in try MgmtSocket() }
        rfkillPath = "/dev/rfkill"
        roundTime = settings.clock.monotonicNanoseconds()
        var slots: [AdapterSlot] = []
        for adapter in adapters {
            let open = Self.prepare(try Self.open(adapter), settings, openManagement, rfkillPath)
            slots.append(AdapterSlot(name: adapter, open: open, settings: settings, now: roundTime))
        }
        self.slots = slots
        rebuildPollers()
    }

    /// Wraps sockets already open that speak H4 (a fake controller in tests and benchmarks).
    public convenience init(
        sockets: [HCISocket], settings: CaptureSettings, onReport: @escaping (AdapterReport) -> Void = { _ in }
    ) {
        self.init(
            sockets: sockets, settings: settings, openManagement: { () throws(HCIError) in try MgmtSocket() },
            rfkillPath: "/dev/rfkill",
            onReport: onReport)
    }

    /// Wraps sockets already open (a fake controller in tests), with a management channel of the test's.
    init(
        sockets: [HCISocket], settings: CaptureSettings, openManagement: @escaping () throws(HCIError) -> MgmtSocket,
        rfkillPath: String,
        onReport: @escaping (AdapterReport) -> Void
    ) {
        self.settings = settings
        self.onReport = onReport
        self.openManagement = openManagement
        self.rfkillPath = rfkillPath
        let now = settings.clock.monotonicNanoseconds()
        roundTime = now
        slots = sockets.map { socket in
            AdapterSlot(
                name: socket.name, open: Self.prepare(socket, settings, openManagement, rfkillPath),
                settings: settings, now: now)
        }
        rebuildPollers()
    }

    deinit {
        stop()
    }

    /// A scanner on the socket, and the ladder's steps for it: rescan with beacond's own commands, power-cycle
    /// through mgmt.
    private static func prepare(
        _ socket: HCISocket, _ settings: CaptureSettings, _ openManagement: @escaping () throws(HCIError) -> MgmtSocket,
        _ rfkillPath: String
    ) -> Open {
        let scanner = HCIScanner(socket: socket)
        let recovery = AdapterRecovery(
            deviceID: socket.deviceID,
            rescan: { () throws(HCIError) in
                scanner.stop()
                try scanner.start(
                    intervalMilliseconds: settings.intervalMilliseconds, windowMilliseconds: settings.windowMilliseconds
                )
            },
            powerCycle: AdapterRecovery.managementPowerCycle(deviceID: socket.deviceID, open: openManagement),
            rfkillPath: rfkillPath)
        return Open(socket: socket, scanner: scanner, recovery: recovery)
    }

    /// The configured names, and whether each is open now.
    public var adapters: [(name: String, present: Bool)] { slots.map { ($0.name, $0.open != nil) } }

    /// Starts passive scanning on every adapter; returns each one's mode.
    @discardableResult
    public func start() throws(HCIError) -> [HCIScanner.Mode] {
        var modes: [HCIScanner.Mode] = []
        for slot in slots {
            guard let open = slot.open else { continue }
            modes.append(
                try open.scanner.start(
                    intervalMilliseconds: settings.intervalMilliseconds, windowMilliseconds: settings.windowMilliseconds
                ))
        }
        roundTime = settings.clock.monotonicNanoseconds()
        for slot in slots { slot.watch.restarted(now: roundTime) }
        return modes
    }

    /// Disables the scans `start` enabled.
    public func stop() {
        for slot in slots { slot.open?.scanner.stop() }
    }

    /// Liveness evidence for `adapter` (a device id) when the settings say adverts alone are not enough.
    public func heard(adapter: UInt16?) {
        for slot in slots where slot.open?.socket.deviceID == adapter { slot.watch.lastHeard = roundTime }
    }

    /// Waits up to `timeoutMilliseconds` for events and hands each to `body` (borrowed: valid during the call),
    /// then runs the watchdogs and reopens adapters that went away. Returns how many events were read.
    @discardableResult
    public func poll(timeoutMilliseconds: Int32, _ body: (CaptureRecord) throws -> Void) throws -> Int {
        let ready = try AdapterWatch.poll(
            &pollers, timeoutMilliseconds: timeoutMilliseconds, now: settings.clock.monotonicNanoseconds(),
            watching: polled.lazy.map(\.watch))
        if ready > 0 { settings.clock.pause(settings.gatherMilliseconds) }
        // One clock read for the whole round: every advert read now is stamped with it, at most the gathering
        // delay after it arrived (docs/performance-history.md, "Live capture").
        roundTime = settings.clock.monotonicNanoseconds()
        var count = 0
        var lost = false
        for index in pollers.indices where ready > 0 && pollers[index].revents != 0 {
            let slot = polled[index]
            guard let socket = slot.open?.socket else { continue }
            // Everything waiting, a batch of packets per system call.
            batches: for _ in 0..<CaptureSettings.readsPerPoll {
                let received: Int
                do {
                    received = try socket.receive(into: packets)
                } catch {
                    drop(slot, error)
                    lost = true
                    break batches
                }
                for packetIndex in 0..<received {
                    let packet = packets[packetIndex]
                    count += 1
                    if settings.livenessFromAnyAdvert && Self.isAdvertisingReport(packet) {
                        slot.watch.lastHeard = roundTime
                    }
                    try body(
                        CaptureRecord(
                            time: CaptureTime(nanosecondsSinceEpoch: roundTime), link: .h4(incoming: true),
                            adapter: socket.deviceID, payload: packet))
                }
                if received < CaptureSettings.packetsPerRead { break }
            }
        }
        maintain()
        if lost { rebuildPollers() }
        return count
    }

    /// The watchdogs, and reopening adapters that went away.
    private func maintain() {
        var reopened = false
        for slot in slots {
            let back = slot.watch.maintain(
                now: roundTime, recovery: slot.open?.recovery, takeUp: { reopen(slot)?.rawValue }, report: onReport)
            reopened = reopened || back
        }
        if reopened { rebuildPollers() }
    }

    private func drop(_ slot: AdapterSlot, _ error: HCIError) {
        slot.open = nil
        slot.watch.away(now: roundTime)
        onReport(AdapterReport(adapter: slot.name, event: .gone(error)))
    }

    /// Opens and starts an adapter that went away; nil while it is still away (or not yet up).
    private func reopen(_ slot: AdapterSlot) -> HCIScanner.Mode? {
        do {
            let open = Self.prepare(try Self.open(slot.name), settings, openManagement, rfkillPath)
            let mode = try open.scanner.start(
                intervalMilliseconds: settings.intervalMilliseconds, windowMilliseconds: settings.windowMilliseconds)
            slot.open = open
            return mode
        } catch {
            return nil
        }
    }

    /// Opens an adapter by name or address, bringing it up first if it is down: with raw HCI nobody else
    /// will (a dongle plugged in again comes back down).
    static func open(_ name: String) throws(HCIError) -> HCISocket {
        let id = try HCISocket.deviceID(named: name)
        do {
            return try HCISocket(deviceID: id)
        } catch  where error.code == .adapterDown {
            try HCISocket.setDevice(id, up: true)
            return try HCISocket(deviceID: id)
        }
    }

    private func rebuildPollers() {
        polled = slots.filter { $0.open != nil }
        pollers = polled.map { pollfd(fd: $0.open!.socket.descriptor, events: Int16(POLLIN), revents: 0) }
    }

    /// An H4 event packet carrying advertising reports (legacy, extended or directed).
    static func isAdvertisingReport(_ packet: UnsafeRawBufferPointer) -> Bool {
        packet.first == HCIPacket.Kind.event.rawValue
            && LEMetaEvent.carriesAdvertisingReports(UnsafeRawBufferPointer(rebasing: packet.dropFirst()))
    }
}
