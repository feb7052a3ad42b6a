public import BeaconWire
public import StationSettings

/// A live source of HCI events, whichever way it reaches the radio (raw HCI, or bluetoothd with the monitor
/// channel or D-Bus): what the daemon's capture thread and `beacond scan` drive.
public protocol LiveRadio: AnyObject {
    /// Waits up to the timeout, hands each event to `body` (borrowed: valid during the call), and runs the
    /// stall watchdogs and adapter comebacks. Returns how many events were handed on.
    @discardableResult
    func poll(timeoutMilliseconds: Int32, _ body: (CaptureRecord) throws -> Void) throws -> Int
    /// Stops the scans this radio started.
    func stop()
    /// Liveness evidence for an adapter, when only the station beacon counts.
    func heard(adapter: UInt16?)
}

extension HCICapture: LiveRadio {}
extension BlueZCapture: LiveRadio {}

extension RadioBackend {
    /// Opens the adapters this way and starts scanning; returns the radio and how each adapter scans.
    public func open(
        adapters: [String], regions: [BeaconRegion], settings: CaptureSettings,
        onReport: @escaping (AdapterReport) -> Void = { _ in }
    ) throws(HCIError) -> (radio: any LiveRadio, methods: [String]) {
        switch self {
        case .hci:
            let capture = try HCICapture(adapters: adapters, settings: settings, onReport: onReport)
            return (capture, try capture.start().map(\.rawValue))
        case .monitor, .dbus:
            let capture = try BlueZCapture(
                mode: self == .monitor ? .monitor : .dbus, adapters: adapters, regions: regions, settings: settings,
                onReport: onReport)
            return (capture, try capture.start())
        }
    }
}
