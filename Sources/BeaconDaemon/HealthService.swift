import BeaconControl
import DaemonSupport
import Logging
public import ServiceLifecycle

/// Tells systemd how the daemon is: `WATCHDOG=1` only while it is not stuck (capture and engine run, so a stuck
/// daemon is restarted; a registry problem is no reason to restart), and a one-line `STATUS=` that
/// `systemctl status beacond` shows. Logs each change of health.
public struct HealthService: Service {
    let collector: StatusCollector
    let notifier: SystemdNotifier?
    let logger: Logger

    public func run() async throws {
        // Ping at half the watchdog interval, as sd_watchdog_enabled(3) advises; look at least every 5 s.
        let interval = min(notifier?.watchdogInterval.map { $0 / 2 } ?? .seconds(5), .seconds(5))
        var lastProblems: [String] = []
        var lastClock: Bool?? = .none
        var lastStatus = ""
        while !Task.isShuttingDownGracefully {
            let report = collector.report()
            if report.problems != lastProblems {
                if report.problems.isEmpty {
                    logger.notice("healthy again")
                } else {
                    logger.warning("unhealthy", metadata: ["problems": "\(report.problems.joined(separator: "; "))"])
                }
                lastProblems = report.problems
            }
            if lastClock != .some(report.clockSynchronized) {
                switch report.clockSynchronized {
                case false?:
                    logger.warning(
                        "the system clock is not synchronised: live sightings wait for it before they are sent")
                case true? where lastClock != nil: logger.notice("the system clock is synchronised")
                default: break
                }
                lastClock = .some(report.clockSynchronized)
            }
            var fields: [String] = []
            if !report.stuck { fields.append("WATCHDOG=1") }
            let status = Self.statusLine(report)
            if status != lastStatus {
                fields.append("STATUS=" + status)
                lastStatus = status
            }
            if !fields.isEmpty { notifier?.notify(fields) }
            // Woken early by a graceful shutdown, so a stop does not wait out the interval.
            _ = try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
        }
        notifier?.notify(["STOPPING=1", "STATUS=stopping: draining the ring and committing the outbox"])
    }

    /// Short enough for one line of `systemctl status`.
    static func statusLine(_ report: StatusReport) -> String {
        let health = report.healthy ? "" : "UNHEALTHY (\(report.problems.joined(separator: "; "))); "
        return "\(health)\(report.missingSet.size) missing bikes; capture \(report.capture.state); "
            + "\(report.sightings.today) sightings today; outbox \(report.outbox.depth)"
    }
}
