package import Foundation

/// What the sweep does to one open report coming due, decided the same way by both stores. Pure: the store reads the
/// open reports whose reminder time has come (`lapsesAt - rules.reminder <= now`), asks here, and writes the step
/// in the same transaction.
package enum SweepStep: Equatable {
    /// The owner is told the report lapses soon (`bike.missing_lapsing`), once a renewal: its key names the renewal.
    case remind(reportId: String, bikeId: String, notice: ReportNotice, key: String)
    /// The report is closed as lapsed and its owner told (`bike.missing_lapsed`): the bike is no longer missing.
    case lapse(reportId: String, bikeId: String, notice: ReportNotice)

    /// An open report as the sweep reads it.
    package struct Due: Equatable {
        package var id: String
        package var bikeId: String
        package var renewedAt: Date
        package var lapsesAt: Date
        package var reminderSentAt: Date?

        package init(id: String, bikeId: String, renewedAt: Date, lapsesAt: Date, reminderSentAt: Date?) {
            self.id = id
            self.bikeId = bikeId
            self.renewedAt = renewedAt
            self.lapsesAt = lapsesAt
            self.reminderSentAt = reminderSentAt
        }
    }

    /// The step for `report` at `now`: it lapses once its time has come, and is reminded once before that; nil
    /// when it was reminded already and has not lapsed.
    package static func step(for report: Due, now: Date) -> SweepStep? {
        if report.lapsesAt <= now {
            return .lapse(
                reportId: report.id, bikeId: report.bikeId,
                notice: ReportNotice(type: .lapsed, timestamp: now, bikeId: report.bikeId, lapsesAt: report.lapsesAt))
        }
        guard report.reminderSentAt == nil else { return nil }
        return .remind(
            reportId: report.id, bikeId: report.bikeId,
            notice: ReportNotice(type: .lapsing, timestamp: now, bikeId: report.bikeId, lapsesAt: report.lapsesAt),
            key: MissingReport.reminderKey(id: report.id, renewedAt: report.renewedAt))
    }
}
