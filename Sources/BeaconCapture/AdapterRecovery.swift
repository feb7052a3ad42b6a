internal import CBlueZ
import BeaconWire
#if canImport(Glibc)
import Glibc
#endif

/// The recovery ladder's steps as system calls on one adapter (see `RecoveryLadder` for when). Every step
/// that touches power or the device ends by starting the scan again, since the controller comes back reset.
public final class AdapterRecovery {
    let socket: HCISocket
    let scanner: HCIScanner
    private let interval: Double
    private let window: Double
    /// Opens the management channel (a socketpair in tests).
    private let openManagement: () throws(HCIError) -> MgmtSocket
    private let rfkillPath: String

    init(
        scanner: HCIScanner, intervalMilliseconds: Double, windowMilliseconds: Double,
        openManagement: @escaping () throws(HCIError) -> MgmtSocket = { () throws(HCIError) in try MgmtSocket() },
        rfkillPath: String = "/dev/rfkill"
    ) {
        self.scanner = scanner
        socket = scanner.socket
        interval = intervalMilliseconds
        window = windowMilliseconds
        self.openManagement = openManagement
        self.rfkillPath = rfkillPath
    }

    public func perform(_ step: RecoveryLadder.Step) throws(HCIError) {
        switch step {
        case .rescan:
            break
        case .powerCycle:
            let management = try openManagement()
            try management.send(MgmtPacket.setPowered(false, index: socket.deviceID), what: "powering \(socket.name) off")
            try management.send(MgmtPacket.setPowered(true, index: socket.deviceID), what: "powering \(socket.name) on")
        case .resetDevice:
            try HCISocket.setDevice(socket.deviceID, up: false, through: socket.descriptor)
            try HCISocket.setDevice(socket.deviceID, up: true, through: socket.descriptor)
        case .rfkillUnblock:
            try unblock()
            // Unblocking leaves the device down; bring it up (already up is fine).
            try HCISocket.setDevice(socket.deviceID, up: true, through: socket.descriptor)
        }
        try rescan()
    }

    func rescan() throws(HCIError) {
        scanner.stop()
        try scanner.start(intervalMilliseconds: interval, windowMilliseconds: window)
    }

    /// Clears the soft block of every Bluetooth radio (what `rfkill unblock bluetooth` does): one
    /// struct rfkill_event written to /dev/rfkill.
    func unblock() throws(HCIError) {
        let fd = open(rfkillPath, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let error = errno
            if error == EACCES || error == EPERM { throw HCIError(.permission, "cannot open \(rfkillPath): no permission to unblock rfkill") }
            throw HCIError(.io, "cannot open \(rfkillPath): \(String(cString: strerror(error)))")
        }
        defer { close(fd) }
        var event = rfkill_event()
        event.type = UInt8(RFKILL_TYPE_BLUETOOTH.rawValue)
        event.op = UInt8(RFKILL_OP_CHANGE_ALL.rawValue)
        event.soft = 0
        let size = MemoryLayout<rfkill_event>.size
        guard withUnsafeBytes(of: &event, { write(fd, $0.baseAddress, size) }) == size else {
            throw HCIError(.io, "cannot write to \(rfkillPath): \(String(cString: strerror(errno)))")
        }
    }
}
