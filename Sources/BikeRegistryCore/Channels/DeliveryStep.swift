package import Foundation

/// What one attempt's answer makes of the message, decided once for every channel and both stores. Pure: the worker
/// gives the channel's answer, what its refusal does (`TargetRefusal`) and its clock; the store writes the outcome.
package enum DeliveryStep {
    /// An attempt's answer as a channel's sender gives it, in the owner's words and none of the transport's.
    package enum Answer: Equatable {
        case delivered
        /// The target is gone (an HTTP endpoint's 410) or refused the message for good (the mail relay's 5xx).
        case refusedForGood(reason: String)
        /// Not now; `retryAfter` when the target said how long to wait.
        case failed(reason: String, retryAfter: TimeInterval?)
    }

    /// Delivered; refused for good, which the channel's refusal applies to the target; or tried again on the
    /// schedule, until the schedule gives the message up.
    package static func outcome(
        of answer: Answer, refusal: TargetRefusal, attempts: Int, createdAt: Date, schedule: RetrySchedule, now: Date
    ) -> NotificationOutcome {
        switch answer {
        case .delivered:
            return .delivered
        case .refusedForGood(let reason):
            return .refused(refusal, error: reason)
        case .failed(let reason, let retryAfter):
            switch schedule.decide(attempts: attempts, createdAt: createdAt, retryAfter: retryAfter, now: now) {
            case .abandon: return .abandon(error: reason)
            case .retry(let at): return .retry(at: at, error: reason)
            }
        }
    }
}
