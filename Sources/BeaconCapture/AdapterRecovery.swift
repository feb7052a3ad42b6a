import BeaconPOSIX
import BeaconWire
internal import CBlueZ

#if canImport(Glibc)
import Glibc
#endif

/// The recovery ladder's steps as system calls on one adapter (see `RecoveryLadder` for when). How to
/// re-enable the scan and power-cycle depends on who owns the radio (raw HCI: beacond's own commands and
/// mgmt; BlueZ: its D-Bus API), so those two come from the backend. Every step that touches power or the
/// device ends by starting the scan again, since the controller comes back reset.
public final class AdapterRecovery {
    public let deviceID: UInt16
    private let rescan: () throws(HCIError) -> Void
    private let powerCycle: () throws(HCIError) -> Void
    private let rfkillPath: String

    public init(
        deviceID: UInt16, rescan: @escaping () throws(HCIError) -> Void,
        powerCycle: @escaping () throws(HCIError) -> Void,
        rfkillPath: String = "/dev/rfkill"
    ) {
        self.deviceID = deviceID
        self.rescan = rescan
        self.powerCycle = powerCycle
        self.rfkillPath = rfkillPath
    }

    /// Power-cycling through the kernel's management channel, as bluetoothd itself does.
    static func managementPowerCycle(
        deviceID: UInt16,
        open: @escaping () throws(HCIError) -> MgmtSocket = { () throws(HCIError) in try MgmtSocket() }
    ) -> () throws(HCIError) -> Void {
        { () throws(HCIError) in
            let management = try open()
            try management.send(MgmtPacket.setPowered(false, index: deviceID), what: "powering hci\(deviceID) off")
            try management.send(MgmtPacket.setPowered(true, index: deviceID), what: "powering hci\(deviceID) on")
        }
    }

    /// One watchdog round for the adapter: asks the ladder (none: no watchdog), reports what it decided, and
    /// takes the step it names, reporting a step that failed.
    func watch(
        _ ladder: inout RecoveryLadder?, now: Int64, lastHeard: Int64, adapter: String,
        report: (AdapterReport) -> Void
    ) {
        guard let events = ladder?.evaluate(now: now, lastHeard: lastHeard) else { return }
        for event in events {
            report(AdapterReport(adapter: adapter, event: .ladder(event)))
            guard case .take(let step) = event else { continue }
            do {
                try perform(step)
            } catch {
                report(AdapterReport(adapter: adapter, event: .stepFailed(step, error)))
            }
        }
    }

    public func perform(_ step: RecoveryLadder.Step) throws(HCIError) {
        switch step {
        case .rescan:
            break
        case .powerCycle:
            try powerCycle()
        case .resetDevice:
            try HCISocket.setDevice(deviceID, up: false)
            try HCISocket.setDevice(deviceID, up: true)
        case .rfkillUnblock:
            try unblock()
            // Unblocking leaves the device down; bring it up (already up is fine).
            try HCISocket.setDevice(deviceID, up: true)
        }
        try rescan()
    }

    /// Clears the soft block of every Bluetooth radio (what `rfkill unblock bluetooth` does): one
    /// struct rfkill_event written to /dev/rfkill.
    func unblock() throws(HCIError) {
        let fd = open(rfkillPath, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let error = errno
            if error == EACCES || error == EPERM {
                throw HCIError(.permission, "cannot open \(rfkillPath): no permission to unblock rfkill")
            }
            throw HCIError(.io, "cannot open \(rfkillPath): \(String(cString: strerror(error)))")
        }
        defer { close(fd) }
        var event = rfkill_event()
        event.type = UInt8(RFKILL_TYPE_BLUETOOTH.rawValue)
        event.op = UInt8(RFKILL_OP_CHANGE_ALL.rawValue)
        event.soft = 0
        let size = MemoryLayout<rfkill_event>.size
        guard retryingOnInterrupt({ withUnsafeBytes(of: &event) { write(fd, $0.baseAddress, size) } }) == size else {
            throw HCIError(.io, "cannot write to \(rfkillPath): \(String(cString: strerror(errno)))")
        }
    }
}
