import AsyncHTTPClient
import BikeRegistryStore
import DaemonSupport
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle

/// Delivers the notifications the database owes, oldest first, eight at a time. A sighting that makes one due rings
/// the doorbell, so an owner is told within a second or so; otherwise it looks again when the next retry is due (or
/// in 30 s at the latest, for messages another server of a shared PostgreSQL database made due).
///
/// Retries back off (5 s by default, doubling to an hour), wait at least `Retry-After`, and survive restarts (the state is in the
/// database); every attempt carries the same webhook-id. An endpoint that answers 410 is disabled. A message not
/// delivered within three days is abandoned.
final class NotificationWorker: Service {
    private let database: any RegistryStore
    private let doorbell: Doorbell
    private let sender: NotificationSender
    private let logger: Logger
    private let retryBase: Double
    static let concurrency = 8
    static let giveUpAfter: TimeInterval = 3 * 86_400

    init(
        database: any RegistryStore, doorbell: Doorbell, sender: NotificationSender, retryBase: Duration,
        logger: Logger
    ) {
        self.retryBase = Double(retryBase.components.seconds) + Double(retryBase.components.attoseconds) / 1e18
        self.database = database
        self.doorbell = doorbell
        self.sender = sender
        self.logger = logger
    }

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    let next = try await self.database.nextNotificationDue()
                    if next.map({ $0.timeIntervalSinceNow > 0 }) ?? true {
                        let wait = next.map { max(0.05, min(30, $0.timeIntervalSinceNow)) } ?? 30
                        await self.doorbell.wait(timeout: .milliseconds(Int(wait * 1000)), clock: ContinuousClock())
                        continue
                    }
                    // Something is due: lanes that each take the next due message until none is left, so a slow
                    // endpoint holds one lane, not the others.
                    _ = try await withThrowingTaskGroup(of: Int.self) { group in
                        for _ in 0..<Self.concurrency {
                            group.addTask {
                                var count = 0
                                while !Task.isCancelled,
                                    try await self.database.deliverDueNotification(now: Date(), self.deliver)
                                { count += 1 }
                                return count
                            }
                        }
                        return try await group.reduce(0, +)
                    }
                } catch {
                    self.logger.error("notification worker: \(error)")
                    try? await Task.sleep(for: .seconds(5))
                }
            }
        }
    }

    /// One attempt, and what the store should make of it.
    @Sendable private func deliver(_ notification: PendingNotification) async -> DeliveryOutcome {
        let metadata: Logger.Metadata = [
            "notification.id": "\(notification.id)", "notification.channel": "\(notification.channel.rawValue)",
            "bike.id": "\(notification.bikeId)",
        ]
        switch await sender.attempt(notification) {
        case .delivered:
            logger.info("notification delivered", metadata: metadata)
            return .delivered
        case .gone:
            logger.notice("notification target gone (410); disabled", metadata: metadata)
            return .gone
        case .retry(let reason, let retryAfter):
            if Date().timeIntervalSince(notification.createdAt) > Self.giveUpAfter {
                logger.warning(
                    "notification abandoned after three days",
                    metadata: metadata.merging(["reason": "\(reason)"]) { $1 })
                return .abandon(error: reason)
            }
            let backoff = min(3600, retryBase * pow(2, Double(min(notification.attempts, 12))))
            let wait = max(backoff, min(3600, retryAfter ?? 0))
            logger.info(
                "notification retried later",
                metadata: metadata.merging(["reason": "\(reason)", "retry.seconds": "\(Int(wait))"]) { $1 })
            return .retry(at: Date().addingTimeInterval(wait), error: reason)
        }
    }
}
