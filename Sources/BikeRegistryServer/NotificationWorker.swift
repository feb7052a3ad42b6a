import BikeRegistryCore
import BikeRegistryStore
import DaemonSupport
import Foundation
import Logging
import NIOConcurrencyHelpers
import ServiceLifecycle

/// Delivers the notifications the database owes, oldest first, on up to `lanes` deliveries at once. A sighting that
/// makes one due rings the doorbell, so an owner is told within a second or so; otherwise it looks again when the
/// next retry is due (or in 30 s at the latest, for messages another server of a shared PostgreSQL database made due).
///
/// The lanes are independent, and a slow endpoint holds one: a lane takes the next message as soon as its own
/// delivery ends, each delivery has one deadline for the whole exchange (`NotificationSender`), and no message is
/// taken for a target a lane is delivering to already, so an endpoint owed a hundred messages gets them one at a
/// time on one lane while the other owners' messages go on the rest. Messages are taken by one loop, so two lanes
/// never take the same one; another server of a shared database passes over a message held by its lease.
///
/// Retries back off (5 s by default, doubling to an hour), wait at least `Retry-After`, and survive restarts (the
/// state is in the database); every attempt carries the same webhook-id. An endpoint that answers 410 is disabled.
/// A message not delivered within three days is abandoned.
final class NotificationWorker: Service {
    private let database: any RegistryStore
    private let doorbell: Doorbell
    private let sender: NotificationSender
    private let logger: Logger
    private let schedule: RetrySchedule
    private let lanes: Int
    /// The registry's clock: when a message is due, when it is retried, when it is given up.
    private let now: @Sendable () -> Date
    /// The longest it waits before looking again, for messages made due by anything that does not ring (another
    /// server of a shared database).
    private let idle: Duration
    /// The targets being delivered to now, one lane each.
    private let busy = NIOLockedValueBox(Set<String>())
    private let events: RegistryEvents?
    /// Told of each attempt: its channel, what came of it and how long it took.
    private let metrics: RegistryMetrics?

    init(
        database: any RegistryStore, doorbell: Doorbell, sender: NotificationSender, lanes: Int, retryBase: Duration,
        now: @escaping @Sendable () -> Date = { Date() }, idle: Duration = .seconds(30), events: RegistryEvents? = nil,
        metrics: RegistryMetrics? = nil, logger: Logger
    ) {
        self.events = events
        self.metrics = metrics
        self.idle = idle
        schedule = RetrySchedule(
            base: Double(retryBase.components.seconds) + Double(retryBase.components.attoseconds) / 1e18)
        self.now = now
        self.database = database
        self.doorbell = doorbell
        self.sender = sender
        self.lanes = max(1, lanes)
        self.logger = logger
    }

    /// How long a taken message is held from other servers: its delivery's deadline and a margin for writing what
    /// came of it. If this server dies, the message is due again after this.
    private var holdFor: TimeInterval {
        let (seconds, attoseconds) = sender.deadline.components
        return Double(seconds) + Double(attoseconds) / 1e18 + 15
    }

    func run() async throws {
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { lanes in
                while !Task.isCancelled {
                    do {
                        if let message = try await self.takeNext() {
                            lanes.addTask {
                                await self.deliver(message)
                                self.busy.withLockedValue { _ = $0.remove(message.target) }
                                self.doorbell.ring()  // a lane is free, and that target may be owed more
                            }
                        } else {
                            await self.doorbell.wait(timeout: try await self.untilNextDue(), clock: ContinuousClock())
                        }
                    } catch {
                        self.logger.error("notification worker: \(error)")
                        try? await Task.sleep(for: .seconds(5))
                    }
                }
            }
        }
    }

    /// The next message due to a target no lane holds, with its target marked busy; nil when every lane is busy or
    /// nothing is due.
    private func takeNext() async throws -> PendingNotification? {
        let busy = self.busy.withLockedValue { $0 }
        guard busy.count < lanes else { return nil }
        let now = now()
        guard
            let message = try await database.takeDueNotification(
                now: now, busyTargets: busy, heldUntil: now.addingTimeInterval(holdFor))
        else { return nil }
        self.busy.withLockedValue { _ = $0.insert(message.target) }
        return message
    }

    /// How long to wait when nothing could be taken: until a lane frees (its doorbell), a sighting rings, or the
    /// next message not held by a lane is due.
    private func untilNextDue() async throws -> Duration {
        let busy = self.busy.withLockedValue { $0 }
        guard busy.count < lanes else { return idle }
        guard let next = try await database.nextNotificationDue(busyTargets: busy) else { return idle }
        return min(idle, .milliseconds(Int(max(0.05, min(30, next.timeIntervalSince(now()))) * 1000)))
    }

    /// One attempt, and what the store makes of it.
    private func deliver(_ notification: PendingNotification) async {
        let outcome = await outcome(of: notification)
        do {
            try await database.recordAttempt(outcome, of: notification, now: now())
            events?.attemptWritten(outcome)
        } catch {
            logger.error(
                "notification worker: what came of a delivery was not written; it will be tried again: \(error)",
                metadata: ["notification.id": "\(notification.id)"])
        }
    }

    /// One attempt, what its answer makes of the message (`DeliveryStep`, on the registry's clock), and a line for the
    /// operator, with the failure's detail the owner is not shown.
    private func outcome(of notification: PendingNotification) async -> NotificationOutcome {
        let metadata: Logger.Metadata = [
            "notification.id": "\(notification.id)", "notification.channel": "\(notification.channel.rawValue)",
            "bike.id": "\(notification.bikeId)",
        ]
        let refusal = sender.channels.channel(notification.channel)?.whenRefused ?? .markFailing
        let started = ContinuousClock.now
        let sent = await sender.attempt(notification)
        let took = ContinuousClock.now - started
        let now = now()
        let outcome = DeliveryStep.outcome(
            of: sent.answer, refusal: refusal, attempts: notification.attempts, createdAt: notification.createdAt,
            schedule: schedule, now: now)
        metrics?.delivery(channel: notification.channel, outcome: outcome, after: took)
        let detail: Logger.Metadata = sent.failure.map { ["reason": "\($0.detail)"] } ?? [:]
        switch outcome {
        case .delivered: logger.info("notification delivered", metadata: metadata)
        case .refused(let refusal, _):
            logger.notice(
                "notification refused for good\(sent == .gone ? " (410)" : ""); \(Self.said(refusal))",
                metadata: metadata.merging(detail) { $1 })
        case .abandon:
            logger.warning("notification abandoned after three days", metadata: metadata.merging(detail) { $1 })
        case .retry(let at, _):
            logger.info(
                "notification retried later",
                metadata: metadata.merging(detail) { $1 }.merging([
                    "retry.seconds": "\(Int(at.timeIntervalSince(now)))"
                ]) { $1 })
        }
        return outcome
    }

    /// What the refusal does, for the log.
    private static func said(_ refusal: TargetRefusal) -> String {
        switch refusal {
        case .remove: "the target is removed"
        case .markFailing: "the target is marked failing"
        }
    }
}
