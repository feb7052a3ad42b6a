import BeaconWire

/// Starts and stops passive LE scanning on an adapter through its HCI socket: the extended commands when the
/// controller's LE features say it supports them (not its HCI version, which some controllers misreport),
/// the legacy ones otherwise. Duplicate filtering is always off.
///
/// HCI has no command that reads whether the controller is scanning, so "restoring" the scan state means
/// this: whatever scan beacond enabled, it disables on `stop()`, leaving the controller as an idle adapter is.
public final class HCIScanner {
    public enum Mode: String, Sendable {
        case legacy, extended
    }

    public let socket: HCISocket
    public private(set) var mode: Mode?

    public init(socket: HCISocket) { self.socket = socket }

    /// The command sequence: features, disable (a controller refuses new parameters while scanning; "Command
    /// Disallowed" only means it was not), parameters, enable.
    @discardableResult
    public func start(intervalMilliseconds: Double, windowMilliseconds: Double) throws(HCIError) -> Mode {
        let features = try socket.command(HCICommand.packet(.leReadLocalSupportedFeatures))
        try check(features, "LE Read Local Supported Features")
        let mode: Mode = HCICommand.supportsExtendedScanning(features: features.parameters) ? .extended : .legacy
        _ = try socket.command(disable(mode))
        switch mode {
        case .extended:
            try check(
                socket.command(
                    HCICommand.setExtendedScanParameters(
                        intervalMilliseconds: intervalMilliseconds, windowMilliseconds: windowMilliseconds)),
                "LE Set Extended Scan Parameters")
            try check(socket.command(HCICommand.setExtendedScanEnable(true)), "LE Set Extended Scan Enable")
        case .legacy:
            try check(
                socket.command(
                    HCICommand.setScanParameters(
                        intervalMilliseconds: intervalMilliseconds, windowMilliseconds: windowMilliseconds)),
                "LE Set Scan Parameters")
            try check(socket.command(HCICommand.setScanEnable(true)), "LE Set Scan Enable")
        }
        self.mode = mode
        return mode
    }

    /// Disables the scan `start` enabled; harmless when there is none. Errors are returned, not thrown: on the
    /// way out there is nothing better to do than say so.
    @discardableResult
    public func stop() -> HCIError? {
        guard let mode else { return nil }
        self.mode = nil
        do {
            try check(socket.command(disable(mode)), "disable scanning")
            return nil
        } catch {
            return error
        }
    }

    private func disable(_ mode: Mode) -> [UInt8] {
        mode == .extended ? HCICommand.setExtendedScanEnable(false) : HCICommand.setScanEnable(false)
    }

    private func check(_ completion: HCICommand.Completion, _ what: String) throws(HCIError) {
        guard completion.status == 0 else {
            throw HCIError(
                .controller, "\(socket.name) refused \(what): HCI status 0x\(String(completion.status, radix: 16))")
        }
    }
}
