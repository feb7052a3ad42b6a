import BeaconPOSIX

#if canImport(Glibc)
import Glibc
#endif

/// sd_notify(3) without libsystemd: one datagram of `KEY=value` lines to `$NOTIFY_SOCKET`. Silent when the
/// daemon is not run by systemd (no socket named), so the same binary works from a terminal.
public final class SystemdNotifier: Sendable {
    private let path: String
    /// `WatchdogSec` of the unit, when the watchdog is on for this process.
    public let watchdogInterval: Duration?

    public init?(environment: [String: String]) {
        guard let path = environment["NOTIFY_SOCKET"], !path.isEmpty, path.hasPrefix("/") || path.hasPrefix("@") else {
            return nil
        }
        self.path = path
        // WATCHDOG_PID, when set, names the process the watchdog is for; a child must not ping for its parent.
        let forUs = environment["WATCHDOG_PID"].map { Int32($0) == getpid() } ?? true
        if forUs, let micros = environment["WATCHDOG_USEC"].flatMap(Int64.init), micros > 0 {
            watchdogInterval = .microseconds(micros)
        } else {
            watchdogInterval = nil
        }
    }

    /// Sends the fields without blocking; failures (including a full socket) are returned, not thrown, since a
    /// lost notification must not stop the daemon.
    @discardableResult
    public func notify(_ fields: [String]) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        // A STATUS= value with a newline would start a new field; keep each on its line.
        let message = Array(fields.map { $0.replacingNewlines() }.joined(separator: "\n").utf8)
        let sent = UnixAddress.with(path) { address, length in
            // Never wait for the reader: a manager that stops reading (a stuck systemd, a test harness) would
            // otherwise block the thread that called, and with it the daemon's other services. A message that
            // does not fit now is dropped; the next ping or status line carries the news.
            message.withUnsafeBytes {
                sendto(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT), address, length)
            }
        }
        return sent == message.count
    }
}

extension String {
    fileprivate func replacingNewlines() -> String {
        String(unicodeScalars.map { $0 == "\n" || $0 == "\r" ? " " : Character($0) })
    }
}
