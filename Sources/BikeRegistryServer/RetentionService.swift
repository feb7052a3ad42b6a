import BikeRegistryCore
import BikeRegistryStore
import Foundation
import Logging
import ServiceLifecycle

/// Deletes sightings older than the retention (90 days by default) at start and every six hours.
struct RetentionService: Service {
    let database: any RegistryStore
    let retention: Duration
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    let purged = try await database.purge(
                        before: Date().addingTimeInterval(-Double(retention.components.seconds)))
                    if purged > 0 { logger.info("old sightings deleted", metadata: ["sightings": "\(purged)"]) }
                } catch {
                    logger.error("cannot delete old sightings: \(error)")
                }
                try? await Task.sleep(for: .seconds(6 * 3600))
            }
        }
    }
}
