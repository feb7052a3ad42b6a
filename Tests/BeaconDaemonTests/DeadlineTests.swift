import DaemonSupport
import Foundation
import Testing

/// `withDeadline`: a deadline passed reads as one, however the operation answers its cancellation.
@Suite(.timeLimit(.minutes(20))) struct DeadlineTests {
    /// An operation that answers cancellation with a CancellationError while the deadline's timer is still
    /// cancelling it. The deadline must still be what the caller hears: the timer answered after cancelling, and
    /// under load a passed deadline read as "connection failed" (RefresherTests, 2026-11-28). With that order back,
    /// this fails each time.
    @Test func aPassedDeadlineIsReportedEvenIfTheOperationAnswersItsCancellationFirst() async throws {
        for _ in 0..<5 {
            await #expect(throws: DeadlineExceeded.self) {
                try await withDeadline(.milliseconds(20)) { try await QuickToCancel().wait() }
            }
        }
    }

    @Test func anAnswerInTimeIsTheAnswer() async throws {
        #expect(try await withDeadline(.seconds(60)) { 42 } == 42)
    }
}

/// Waits until cancelled, then throws CancellationError; its cancellation handler holds the cancelling thread a
/// while, so the waiter, woken by the cancellation, answers before the canceller's next step.
private struct QuickToCancel {
    func wait() async throws {
        try await withTaskCancellationHandler {
            try await Task.sleep(for: .seconds(600))
        } onCancel: {
            Thread.sleep(forTimeInterval: 0.2)
        }
    }
}
