public import BeaconWire
#if canImport(Glibc)
import Glibc
#endif

/// Live capture from one or more adapters through raw HCI sockets: scanning started on each, then every
/// event read into one reused buffer and handed on as a `CaptureRecord` stamped with the wall clock.
public final class HCICapture {
    public let sockets: [HCISocket]
    private let scanners: [HCIScanner]
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1_024, alignment: 8)
    private var pollers: [pollfd]

    /// Opens every adapter (by name or address); the first that cannot be opened is the error.
    public init(adapters: [String]) throws(HCIError) {
        var sockets: [HCISocket] = []
        for adapter in adapters {
            sockets.append(try HCISocket(deviceID: try HCISocket.deviceID(named: adapter)))
        }
        self.sockets = sockets
        scanners = sockets.map(HCIScanner.init(socket:))
        pollers = sockets.map { pollfd(fd: $0.descriptor, events: Int16(POLLIN), revents: 0) }
    }

    deinit {
        stop()
        buffer.deallocate()
    }

    /// Starts passive scanning on every adapter; returns each one's mode.
    @discardableResult
    public func start(intervalMilliseconds: Double, windowMilliseconds: Double) throws(HCIError) -> [HCIScanner.Mode] {
        var modes: [HCIScanner.Mode] = []
        for scanner in scanners {
            modes.append(try scanner.start(intervalMilliseconds: intervalMilliseconds, windowMilliseconds: windowMilliseconds))
        }
        return modes
    }

    /// Disables the scans `start` enabled.
    public func stop() {
        for scanner in scanners { scanner.stop() }
    }

    /// Waits up to `timeoutMilliseconds` for events and hands each to `body` (borrowed: valid during the call).
    /// Returns how many were read.
    @discardableResult
    public func poll(timeoutMilliseconds: Int32, _ body: (CaptureRecord) throws -> Void) throws -> Int {
        let ready = pollers.withUnsafeMutableBufferPointer { Glibc.poll($0.baseAddress, nfds_t($0.count), timeoutMilliseconds) }
        guard ready > 0 else {
            if ready < 0 && errno != EINTR { throw HCISocket.failure(errno, "wait for", name: "the adapters") }
            return 0
        }
        var count = 0
        for index in pollers.indices where pollers[index].revents != 0 {
            let socket = sockets[index]
            let length = try socket.read(into: buffer, timeoutMilliseconds: 0)
            guard length > 0 else { continue }
            count += 1
            try body(
                CaptureRecord(
                    time: Self.now(), link: .h4(incoming: true), adapter: socket.deviceID,
                    payload: UnsafeRawBufferPointer(rebasing: buffer[..<length])))
        }
        return count
    }

    static func now() -> CaptureTime {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return CaptureTime(nanosecondsSinceEpoch: Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec))
    }
}
