import BeaconPOSIX
public import BeaconWire
internal import CBlueZ

#if canImport(Glibc)
import Glibc
#endif

/// Why the radio cannot be used, in words a café owner (or whoever set up the Pi) can act on.
public struct HCIError: Error, CustomStringConvertible {
    public enum Code: Sendable {
        case permission, noBluetooth, noAdapter, adapterDown, io, controller, timeout
    }
    public var code: Code
    public var description: String

    init(_ code: Code, _ description: String) {
        self.code = code
        self.description = description
    }

    /// The exit status for it (sysexits): 77, EX_NOPERM, for a missing capability; 69, EX_UNAVAILABLE, for
    /// no Bluetooth, adapter or bluetoothd.
    public var exitCode: Int32 { code == .permission ? 77 : 69 }
}

/// A raw HCI socket on one adapter (libbluetooth's definitions): reads events, sends commands. The kernel
/// filter passes only the events beacond reads (LE Meta, Command Complete, Command Status), so a busy radio's
/// other traffic never wakes the capture thread.
public final class HCISocket: @unchecked Sendable {
    public let deviceID: UInt16
    public let name: String
    // Only the capture thread uses the descriptor after opening; `close()` happens once, in deinit.
    let descriptor: Int32

    /// `hciN`, or an adapter's address.
    public static func deviceID(named name: String) throws(HCIError) -> UInt16 {
        if name.hasPrefix("hci"), let number = UInt16(name.dropFirst(3)) { return number }
        let id = hci_devid(name)
        guard id >= 0 else {
            throw HCIError(.noAdapter, "no Bluetooth adapter with address \(name) (see `hciconfig` or `btmgmt info`)")
        }
        return UInt16(id)
    }

    /// Opens and binds a raw socket to the adapter, which must exist and be up.
    public init(deviceID: UInt16) throws(HCIError) {
        self.deviceID = deviceID
        self.name = "hci\(deviceID)"
        let fd = try Self.openRaw("open an HCI socket", name: name)
        descriptor = fd
        if let error = Self.bind(fd, device: deviceID, channel: UInt16(HCI_CHANNEL_RAW)) {
            close(fd)
            if error == ENODEV {
                throw HCIError(.noAdapter, "no Bluetooth adapter \(name) (plugged in? `hciconfig -a` lists them)")
            }
            throw Self.failure(error, "bind to", name: name)
        }
        var info = hci_dev_info()
        if hci_devinfo(Int32(deviceID), &info) == 0, info.flags & (1 << UInt32(HCI_UP)) == 0 {
            close(fd)
            throw HCIError(.adapterDown, "\(name) is down: `sudo hciconfig \(name) up` or `bluetoothctl power on`")
        }
        try setFilter()
    }

    /// A raw BTPROTO_HCI socket, not yet bound: every HCI channel (raw, monitor, control) starts as one.
    /// A kernel without Bluetooth is said in words.
    static func openRaw(_ doing: String, name: String) throws(HCIError) -> Int32 {
        let fd = socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), BTPROTO_HCI)
        guard fd < 0 else { return fd }
        let error = errno
        if error == EAFNOSUPPORT || error == EPROTONOSUPPORT {
            throw HCIError(
                .noBluetooth,
                "this kernel has no Bluetooth support (load the bluetooth module, or use a kernel with it)")
        }
        throw failure(error, doing, name: name)
    }

    /// Binds an HCI socket to an adapter (or HCI_DEV_NONE) on a channel; the errno when that fails, for the
    /// caller to say what it means for its channel.
    static func bind(_ fd: Int32, device: UInt16, channel: UInt16) -> Int32? {
        var address = sockaddr_hci()
        address.hci_family = sa_family_t(AF_BLUETOOTH)
        address.hci_dev = device
        address.hci_channel = channel
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_hci>.size))
            }
        }
        return bound == 0 ? nil : errno
    }

    /// HCIDEVUP or HCIDEVDOWN (CAP_NET_ADMIN), through an HCI socket of its own; up on an adapter already
    /// up is not an error.
    static func setDevice(_ deviceID: UInt16, up: Bool) throws(HCIError) {
        let fd: Int32
        do {
            fd = try openRaw("open an HCI socket for", name: "hci\(deviceID)")
        } catch {
            throw HCIError(error.code, "hci\(deviceID): \(error)")  // the ladder's log names the adapter
        }
        defer { close(fd) }
        try setDevice(deviceID, up: up, through: fd)
    }

    private static func setDevice(_ deviceID: UInt16, up: Bool, through descriptor: Int32) throws(HCIError) {
        let result =
            up
            ? beacond_hci_device_up(descriptor, Int32(deviceID)) : beacond_hci_device_down(descriptor, Int32(deviceID))
        guard result != 0 else { return }
        let error = errno
        let name = "hci\(deviceID)"
        let what = up ? "HCIDEVUP" : "HCIDEVDOWN"
        switch error {
        case EALREADY where up: return
        case EPERM, EACCES:
            throw HCIError(.permission, "\(what) on \(name) needs CAP_NET_ADMIN (or `sudo hciconfig \(name) up`)")
        case ERFKILL: throw HCIError(.adapterDown, "\(name) is blocked by rfkill: `sudo rfkill unblock bluetooth`")
        default: throw HCIError(.adapterDown, "\(what) on \(name) failed: \(String(cString: strerror(error)))")
        }
    }

    /// Wraps a descriptor that speaks H4 (a socketpair in tests, playing a controller).
    public init(descriptor: Int32, deviceID: UInt16) {
        self.descriptor = descriptor
        self.deviceID = deviceID
        self.name = "hci\(deviceID)"
    }

    deinit { close(descriptor) }

    private func setFilter() throws(HCIError) {
        var filter = hci_filter()
        hci_filter_clear(&filter)
        hci_filter_set_ptype(Int32(HCI_EVENT_PKT), &filter)
        hci_filter_set_event(Int32(EVT_LE_META_EVENT), &filter)
        hci_filter_set_event(Int32(EVT_CMD_COMPLETE), &filter)
        hci_filter_set_event(Int32(EVT_CMD_STATUS), &filter)
        guard setsockopt(descriptor, SOL_HCI, HCI_FILTER, &filter, socklen_t(MemoryLayout<hci_filter>.size)) == 0 else {
            throw Self.failure(errno, "set the HCI filter on", name: name)
        }
    }

    /// Sends a command packet and waits for its Command Complete or Status, skipping other events meanwhile.
    public func command(_ packet: [UInt8], timeoutMilliseconds: Int32 = 2_000) throws(HCIError) -> HCICommand.Completion
    {
        let opcode = UInt16(packet[1]) | UInt16(packet[2]) << 8
        let written = retryingOnInterrupt { packet.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) } }
        guard written == packet.count else { throw Self.failure(errno, "send a command to", name: name) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1_024, alignment: 1)
        defer { buffer.deallocate() }
        var remaining = timeoutMilliseconds
        while remaining > 0 {
            let started = SystemTime.monotonicMilliseconds()
            let count = try read(into: buffer, timeoutMilliseconds: remaining)
            remaining -= Int32(SystemTime.monotonicMilliseconds() - started)
            guard count > 0 else { continue }
            let answer = HCICommand.Completion(h4: UnsafeRawBufferPointer(rebasing: buffer[..<count]))
            if let answer, answer.opcode == opcode { return answer }
        }
        throw HCIError(
            .timeout, "\(name) did not answer command 0x\(String(opcode, radix: 16)) within \(timeoutMilliseconds) ms")
    }

    /// Reads one packet into `buffer`; 0 when nothing came within the timeout.
    public func read(into buffer: UnsafeMutableRawBufferPointer, timeoutMilliseconds: Int32) throws(HCIError) -> Int {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let ready = interruptIsNothing { poll(&poller, 1, timeoutMilliseconds) }
        if ready < 0 { throw Self.failure(errno, "wait for", name: name) }
        guard ready > 0 else { return 0 }
        if poller.revents & Int16(POLLHUP | POLLERR) != 0 && poller.revents & Int16(POLLIN) == 0 {
            throw HCIError(.io, "\(name) went away")
        }
        let count = interruptIsNothing { Glibc.read(descriptor, buffer.baseAddress, buffer.count) }
        if count < 0 {
            if errno == EAGAIN { return 0 }
            if errno == ENODEV || errno == ENETDOWN {
                throw HCIError(.noAdapter, "\(name) went away (unplugged or powered off)")
            }
            throw Self.failure(errno, "read from", name: name)
        }
        if count == 0 { throw HCIError(.io, "\(name) closed") }
        return count
    }

    /// Everything waiting, a batch per call (recvmmsg): how many packets `batch` now holds, 0 when none waited.
    /// A zero-length packet is the end of the stream (a socketpair's peer gone).
    func receive(into batch: PacketBatch) throws(HCIError) -> Int {
        switch batch.receive(from: descriptor) {
        case .success(let count):
            if count > 0 && batch[0].isEmpty { throw HCIError(.io, "\(name) went away") }
            return count
        case .failure(let error):
            if error.code == ENODEV || error.code == ENETDOWN {
                throw HCIError(.noAdapter, "\(name) went away (unplugged or powered off)")
            }
            throw Self.failure(error.code, "read from", name: name)
        }
    }

    static func failure(_ error: Int32, _ doing: String, name: String) -> HCIError {
        switch error {
        case EPERM, EACCES:
            HCIError(
                .permission,
                "cannot \(doing) \(name): raw HCI needs CAP_NET_RAW (run as root, or `sudo setcap cap_net_raw,cap_net_admin+ep beacond`, or use the systemd unit)"
            )
        default:
            HCIError(.io, "cannot \(doing) \(name): \(String(cString: strerror(error)))")
        }
    }
}
