import BikeRegistryCore
import Foundation
import Testing

/// The owner's change to a report, decided without a database, on a clock the test sets.
@Suite(.timeLimit(.minutes(1))) struct ReportStepTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let rules = MissingReportRules()
    static let day: TimeInterval = 86_400

    @Test func aBikeWithNoOpenReportIsReportedWithItsDetails() {
        let details = MissingReportDetails(lastSeenPlace: "Ace Café")
        let steps = ReportStep.steps(
            for: BikeChange(missing: true, report: details), open: false, made: [], rules: Self.rules, now: Self.now)
        #expect(steps == .success([.make(details)]))
    }

    @Test func aFourthReportInThirtyDaysWaitsForTheOldestToAge() {
        let made = [20, 10, 2].map { Self.now.addingTimeInterval(-$0 * Self.day) }
        let steps = ReportStep.steps(
            for: BikeChange(missing: true), open: false, made: made, rules: Self.rules, now: Self.now)
        #expect(steps == .failure(.tooManyReports(made[0].addingTimeInterval(30 * Self.day))))
        let older = [40, 10, 2].map { Self.now.addingTimeInterval(-$0 * Self.day) }
        #expect(
            ReportStep.steps(for: BikeChange(missing: true), open: false, made: older, rules: Self.rules, now: Self.now)
                == .success([.make(MissingReportDetails())]), "one made 40 days ago counts no more")
    }

    @Test func anOpenReportIsAmendedRenewedOrClosed() {
        let details = MissingReportDetails(policeReference: "CAD 1234")
        #expect(
            ReportStep.steps(
                for: BikeChange(missing: true, report: details, renew: true), open: true, made: [], rules: Self.rules,
                now: Self.now) == .success([.amend(details), .renew]))
        #expect(
            ReportStep.steps(for: BikeChange(missing: false), open: true, made: [], rules: Self.rules, now: Self.now)
                == .success([.close(.recovered)]), "found, recovered unless said")
        #expect(
            ReportStep.steps(
                for: BikeChange(missing: false, outcome: .withdrawn), open: true, made: [], rules: Self.rules,
                now: Self.now) == .success([.close(.withdrawn)]))
        #expect(
            ReportStep.steps(for: BikeChange(missing: false), open: false, made: [], rules: Self.rules, now: Self.now)
                == .success([]), "nothing to close")
    }

    @Test func detailsOrARenewalWithoutAnOpenReportAreRefused() {
        #expect(
            ReportStep.steps(for: BikeChange(renew: true), open: false, made: [], rules: Self.rules, now: Self.now)
                == .failure(.noOpenReport))
        #expect(
            ReportStep.steps(for: BikeChange(), open: false, made: [], rules: Self.rules, now: Self.now)
                == .success([]), "a change of targets alone asks nothing of the report")
    }
}
