package import Foundation

/// What a finder's report of a beacon does, decided the same way by both stores. Pure: the store reads the bike with
/// that beacon, asks here, and writes the steps in the same transaction.
package enum AbuseStep: Equatable {
    /// The finder's report, kept under its id.
    case keep(reportId: String)
    /// The bike's messages pause: what it still owed goes no further, and its owner is told once (`bike.paused`).
    case pause(notice: ReportNotice)

    /// The steps for a report `reportId` of the beacon of a bike (`paused` already, or not), at `now`.
    package static func steps(reportId: String, bikeId: String, paused: Bool, now: Date) -> [AbuseStep] {
        let keep = AbuseStep.keep(reportId: reportId)
        guard !paused else { return [keep] }
        return [keep, .pause(notice: ReportNotice(type: .paused, timestamp: now, bikeId: bikeId, lapsesAt: nil))]
    }

    /// The report's answer, once the steps are written.
    package static func outcome(of steps: [AbuseStep], reportId: String) -> AbuseOutcome {
        .recorded(id: reportId, paused: steps.contains { if case .pause = $0 { true } else { false } })
    }
}
