import BikeRegistryCore
import BikeRegistryStore
import Foundation
import Logging
import NIOConcurrencyHelpers
import ServiceLifecycle

/// Each station's latest refresh (`station list`'s "last refresh", and how many stations were listening), kept in
/// memory and written every few seconds in one transaction, and once more at shutdown: answering a refresh stays a
/// read, however many stations there are (10,000 refreshing every 5 minutes would otherwise be 33 commits a second).
final class StationRefreshLog: Service {
    private let database: any RegistryStore
    private let interval: Duration
    private let logger: Logger
    private let pending = NIOLockedValueBox([Int64: StationRefresh]())

    init(database: any RegistryStore, interval: Duration, logger: Logger) {
        self.database = database
        self.interval = interval
        self.logger = logger
    }

    func note(_ station: Station, userAgent: String?) {
        let refresh = StationRefresh(at: Date(), userAgent: userAgent.map { String($0.prefix(200)) })
        pending.withLockedValue { $0[station.id] = refresh }
    }

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try? await Task.sleep(for: self.interval)
                if Task.isCancelled { break }
                await self.write()
            }
        }
        // The last write, in a task of its own: this one may be cancelled by now (a server stopped by cancellation,
        // or its service group cancelling what is left), and the store refuses work in a cancelled task.
        await Task { await self.write() }.value
    }

    private func write() async {
        let batch = pending.withLockedValue { pending in
            defer { pending = [:] }
            return pending
        }
        guard !batch.isEmpty else { return }
        do {
            try await database.recordRefreshes(batch)
        } catch {
            // Kept for the next write, unless a newer refresh of the same station came meanwhile.
            pending.withLockedValue { $0.merge(batch) { newer, _ in newer } }
            logger.error("cannot note stations' refreshes: \(error)")
        }
    }
}
