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
    public struct Settings: Sendable {
        public var intervalMilliseconds: Double
        public var windowMilliseconds: Double
        /// The stall watchdog, or none (`beacond record`).
        public var recovery: RecoveryLadder.Policy?
        /// Whether any advertising report counts as liveness, or only what the owner passes to `heard`
        /// (the station beacon).
        public var livenessFromAnyAdvert = true
        public var reopenMilliseconds: Int64 = 2_000
        /// How long adverts may gather after the first one wakes the capture thread, before it reads them all at
        /// once (0: read at once). Adverts come spread out, so reading each as it comes woke the thread for nearly
        /// every one; no decision of the engine needs them sooner than this.
        public var gatherMilliseconds = 0

        public init(intervalMilliseconds: Double, windowMilliseconds: Double, recovery: RecoveryLadder.Policy? = nil) {
            self.intervalMilliseconds = intervalMilliseconds
            self.windowMilliseconds = windowMilliseconds
            self.recovery = recovery
        }
    }

    /// Something that happened to an adapter, for the log and the status.
    public struct Report: Sendable {
        public enum Event: Sendable {
            case ladder(RecoveryLadder.Event)
            case stepFailed(RecoveryLadder.Step, HCIError)
            case gone(HCIError)
            /// Back, scanning this way (legacy, extended, advertisement monitor, discovery).
            case back(String)
        }
        public var adapter: String
        public var event: Event
    }

    /// An adapter that is there: its socket, its scan, the steps that recover it.
    struct Open {
        let socket: HCISocket
        let scanner: HCIScanner
        let recovery: AdapterRecovery
    }

    /// One configured adapter: open, or away (`open` nil), with its ladder.
    final class AdapterSlot {
        let name: String
        var open: Open?
        var ladder: RecoveryLadder?
        var lastHeard: Int64
        var nextReopen: Int64 = 0

        init(name: String, open: Open, policy: RecoveryLadder.Policy?, now: Int64) {
            self.name = name
            self.open = open
            ladder = policy.map(RecoveryLadder.init(policy:))
            lastHeard = now
        }
    }

    /// Most packets read from one adapter per poll, so one busy adapter cannot starve another: this many batches.
    static let batchesPerPoll = 4
    static let batch = 64
    private let settings: Settings
    private let slots: [AdapterSlot]
    private let onReport: (Report) -> Void
    private let openManagement: () throws(HCIError) -> MgmtSocket
    private let rfkillPath: String
    private let packets = PacketBatch(capacity: HCICapture.batch)
    private var pollers: [pollfd] = []
    private var polled: [AdapterSlot] = []
    /// Monotonic time of the current poll round: one clock read per round, not per advert.
    private var roundTime: Int64

    /// Opens every adapter (by name or address); the first that cannot be opened is the error, so a daemon
    /// never starts without the radio it was told to use.
    public init(adapters: [String], settings: Settings, onReport: @escaping (Report) -> Void = { _ in })
        throws(HCIError)
    {
        self.settings = settings
        self.onReport = onReport
        openManagement = { () throws(HCIError) in try MgmtSocket() }
        rfkillPath = "/dev/rfkill"
        roundTime = SystemTime.monotonicNanoseconds()
        var slots: [AdapterSlot] = []
        for adapter in adapters {
            let open = Self.prepare(try Self.open(adapter), settings, openManagement, rfkillPath)
            slots.append(AdapterSlot(name: adapter, open: open, policy: settings.recovery, now: roundTime))
        }
        self.slots = slots
        rebuildPollers()
    }

    /// Wraps sockets already open that speak H4 (a fake controller in tests and benchmarks).
    public convenience init(sockets: [HCISocket], settings: Settings, onReport: @escaping (Report) -> Void = { _ in }) {
        self.init(
            sockets: sockets, settings: settings, openManagement: { () throws(HCIError) in try MgmtSocket() },
            rfkillPath: "/dev/rfkill",
            onReport: onReport)
    }

    /// Wraps sockets already open (a fake controller in tests), with a management channel of the test's.
    init(
        sockets: [HCISocket], settings: Settings, openManagement: @escaping () throws(HCIError) -> MgmtSocket,
        rfkillPath: String,
        onReport: @escaping (Report) -> Void
    ) {
        self.settings = settings
        self.onReport = onReport
        self.openManagement = openManagement
        self.rfkillPath = rfkillPath
        let now = SystemTime.monotonicNanoseconds()
        roundTime = now
        slots = sockets.map { socket in
            AdapterSlot(
                name: socket.name, open: Self.prepare(socket, settings, openManagement, rfkillPath),
                policy: settings.recovery, now: now)
        }
        rebuildPollers()
    }

    deinit {
        stop()
    }

    /// A scanner on the socket, and the ladder's steps for it: rescan with beacond's own commands, power-cycle
    /// through mgmt.
    private static func prepare(
        _ socket: HCISocket, _ settings: Settings, _ openManagement: @escaping () throws(HCIError) -> MgmtSocket,
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
        roundTime = SystemTime.monotonicNanoseconds()
        for slot in slots { slot.lastHeard = roundTime }
        return modes
    }

    /// Disables the scans `start` enabled.
    public func stop() {
        for slot in slots { slot.open?.scanner.stop() }
    }

    /// Liveness evidence for `adapter` (a device id) when the settings say adverts alone are not enough.
    public func heard(adapter: UInt16?) {
        for slot in slots where slot.open?.socket.deviceID == adapter { slot.lastHeard = roundTime }
    }

    /// Waits up to `timeoutMilliseconds` for events and hands each to `body` (borrowed: valid during the call),
    /// then runs the watchdogs and reopens adapters that went away. Returns how many events were read.
    @discardableResult
    public func poll(timeoutMilliseconds: Int32, _ body: (CaptureRecord) throws -> Void) throws -> Int {
        let wait = Self.wait(
            timeoutMilliseconds, until: Self.nextDecision(of: slots.lazy.map { ($0.ladder, $0.lastHeard) }))
        let ready = pollers.withUnsafeMutableBufferPointer { Glibc.poll($0.baseAddress, nfds_t($0.count), wait) }
        if ready < 0 && errno != EINTR { throw HCISocket.failure(errno, "wait for", name: "the adapters") }
        if ready > 0 { SystemTime.sleep(milliseconds: settings.gatherMilliseconds) }
        // One clock read for the whole round: every advert read now is stamped with it, at most the gathering
        // delay after it arrived (BENCHMARKS.md, "Live capture").
        roundTime = SystemTime.monotonicNanoseconds()
        var count = 0
        var lost = false
        for index in pollers.indices where ready > 0 && pollers[index].revents != 0 {
            let slot = polled[index]
            guard let socket = slot.open?.socket else { continue }
            // Everything waiting, a batch of packets per system call.
            batches: for _ in 0..<Self.batchesPerPoll {
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
                        slot.lastHeard = roundTime
                    }
                    try body(
                        CaptureRecord(
                            time: CaptureTime(nanosecondsSinceEpoch: roundTime), link: .h4(incoming: true),
                            adapter: socket.deviceID, payload: packet))
                }
                if received < HCICapture.batch { break }
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
            if let recovery = slot.open?.recovery {
                recovery.watch(
                    &slot.ladder, now: roundTime, lastHeard: slot.lastHeard, adapter: slot.name,
                    report: onReport)
            } else if roundTime >= slot.nextReopen {
                slot.nextReopen = roundTime + settings.reopenMilliseconds * 1_000_000
                if let mode = reopen(slot) {
                    onReport(Report(adapter: slot.name, event: .back(mode.rawValue)))
                    reopened = true
                }
            }
        }
        if reopened { rebuildPollers() }
    }

    private func drop(_ slot: AdapterSlot, _ error: HCIError) {
        slot.open = nil
        slot.nextReopen = roundTime + settings.reopenMilliseconds * 1_000_000
        onReport(Report(adapter: slot.name, event: .gone(error)))
    }

    /// Opens and starts an adapter that went away; nil while it is still away (or not yet up).
    private func reopen(_ slot: AdapterSlot) -> HCIScanner.Mode? {
        do {
            let open = Self.prepare(try Self.open(slot.name), settings, openManagement, rfkillPath)
            let mode = try open.scanner.start(
                intervalMilliseconds: settings.intervalMilliseconds, windowMilliseconds: settings.windowMilliseconds)
            slot.open = open
            slot.ladder = settings.recovery.map(RecoveryLadder.init(policy:))
            slot.lastHeard = roundTime
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

    /// The poll timeout, cut short so a watchdog decision due sooner is taken on time (to the millisecond,
    /// rounded up so the decision is due when poll returns).
    static func wait(_ timeoutMilliseconds: Int32, until deadline: Int64?) -> Int32 {
        guard let deadline else { return timeoutMilliseconds }
        let left = (deadline - SystemTime.monotonicNanoseconds() + 999_999) / 1_000_000
        return Int32(max(0, min(Int64(timeoutMilliseconds), left)))
    }

    /// The soonest decision of any ladder (without building an array: this runs once per poll).
    static func nextDecision(of ladders: some Sequence<(RecoveryLadder?, Int64)>) -> Int64? {
        var soonest: Int64?
        for case (let ladder?, let lastHeard) in ladders {
            let next = ladder.nextDecision(lastHeard: lastHeard)
            if soonest.map({ next < $0 }) ?? true { soonest = next }
        }
        return soonest
    }

    /// An H4 event packet carrying advertising reports (legacy, extended or directed).
    static func isAdvertisingReport(_ packet: UnsafeRawBufferPointer) -> Bool {
        packet.first == HCIPacket.Kind.event.rawValue
            && LEMetaEvent.carriesAdvertisingReports(UnsafeRawBufferPointer(rebasing: packet.dropFirst()))
    }
}
