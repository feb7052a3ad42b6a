import BikeRegistryCore
import BikeRegistryStore
import DaemonSupport
import Foundation
import Logging
import ServiceLifecycle

/// Reminds owners of missing reports about to lapse, and lapses the ones nobody renewed (issue 38), at start and
/// every `interval`, as of the registry's clock. A lapsed bike leaves the stations' list; each reminder and lapse
/// is a message owed, rung to the notification worker at once. The limits' counts whose windows have ended are
/// deleted on the same round (`SharedLimits`).
struct ReportSweeper: Service {
    let database: any RegistryStore
    let rules: MissingReportRules
    let interval: Duration
    let now: @Sendable () -> Date
    let snapshot: RegistrySnapshot
    let doorbell: Doorbell
    let events: RegistryEvents?
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                await sweep()
                try? await Task.sleep(for: interval)
            }
        }
    }

    func sweep() async {
        let moment = now()
        do {
            let sweep = try await database.sweepReports(rules: rules, now: moment)
            if sweep.lapsed > 0 { try await snapshot.listChanged() }
            events?.swept(at: moment)
            if sweep.reminded + sweep.lapsed > 0 {
                doorbell.ring()
                logger.info(
                    "missing reports swept", metadata: ["reminded": "\(sweep.reminded)", "lapsed": "\(sweep.lapsed)"])
            }
        } catch {
            logger.error("cannot sweep the missing reports: \(error)")
        }
        do {
            _ = try await database.forgetEndedCounts(now: now())
        } catch {
            logger.error("cannot delete the limits' ended counts: \(error)")
        }
    }
}
