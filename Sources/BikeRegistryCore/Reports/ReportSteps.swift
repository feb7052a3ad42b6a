package import Foundation

/// What an owner's change does to the bike's report, decided the same way by both stores. Pure: the store reads the
/// bike's open report and the times of its recent reports, asks here, and writes the steps in the same transaction.
package enum ReportStep: Equatable {
    /// A new report: the bike is missing from now on.
    case make(MissingReportDetails)
    /// New details for the open report.
    case amend(MissingReportDetails)
    /// The open report's lapse counts from now.
    case renew
    /// The open report ends with this outcome: the bike is no longer missing.
    case close(MissingReport.Outcome)

    /// The steps `change` asks of a bike with (`open`) or without an open report, whose reports were made at `made`;
    /// or the refusal it gets.
    package static func steps(
        for change: BikeChange, open: Bool, made: [Date], rules: MissingReportRules, now: Date
    ) -> Result<[ReportStep], BikeRefusal> {
        switch change.missing {
        case true?:
            guard open else {
                if let next = rules.nextAllowed(made: made, now: now) { return .failure(.tooManyReports(next)) }
                return .success([.make(change.report ?? MissingReportDetails())])
            }
            return .success((change.report.map { [.amend($0)] } ?? []) + (change.renew ? [.renew] : []))
        case false?:
            return .success(open ? [.close(change.outcome ?? .recovered)] : [])
        case nil:
            guard change.renew || change.report != nil else { return .success([]) }
            guard open else { return .failure(.noOpenReport) }
            return .success((change.report.map { [.amend($0)] } ?? []) + (change.renew ? [.renew] : []))
        }
    }
}

/// Why a change was refused (`BikeUpdate`'s refusals, within a store's transaction).
package enum BikeRefusal: Error, Equatable {
    case tooManyReports(Date)
    case noOpenReport

    package var update: BikeUpdate {
        switch self {
        case .tooManyReports(let next): .tooManyReports(nextAllowed: next)
        case .noOpenReport: .noOpenReport
        }
    }
}

extension MissingReport {
    /// The key its reminder is kept once under: one a renewal, so that a report renewed and coming due again is
    /// reminded again.
    package static func reminderKey(id: String, renewedAt: Date) -> String {
        "\(id)@\(Int64((renewedAt.timeIntervalSince1970 * 1000).rounded()))"
    }
}
