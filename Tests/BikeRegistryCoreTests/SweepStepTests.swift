import BikeRegistryCore
import Foundation
import Testing

/// The sweep's lapse-or-remind decision, without a database, on a clock the test sets.
@Suite(.timeLimit(.minutes(1))) struct SweepStepTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func due(lapsesIn seconds: TimeInterval, reminded: Bool = false) -> SweepStep.Due {
        SweepStep.Due(
            id: "report_1", bikeId: "bike_1", renewedAt: now.addingTimeInterval(-86_400 * 27),
            lapsesAt: now.addingTimeInterval(seconds), reminderSentAt: reminded ? now.addingTimeInterval(-60) : nil)
    }

    @Test func aReportComingDueIsRemindedOnceARenewal() throws {
        let report = Self.due(lapsesIn: 3_600)
        let step = try #require(SweepStep.step(for: report, now: Self.now))
        guard case .remind(let id, let bike, let notice, let key) = step else {
            Issue.record("\(step)")
            return
        }
        #expect(id == "report_1" && bike == "bike_1" && notice.type == .lapsing && notice.lapsesAt == report.lapsesAt)
        #expect(key == MissingReport.reminderKey(id: "report_1", renewedAt: report.renewedAt))
        #expect(SweepStep.step(for: Self.due(lapsesIn: 3_600, reminded: true), now: Self.now) == nil, "reminded once")
    }

    @Test func aReportWhoseTimeHasComeLapsesRemindedOrNot() {
        for reminded in [false, true] {
            let step = SweepStep.step(for: Self.due(lapsesIn: 0, reminded: reminded), now: Self.now)
            guard case .lapse(let id, _, let notice) = step else {
                Issue.record("\(String(describing: step))")
                continue
            }
            #expect(id == "report_1" && notice.type == .lapsed && notice.timestamp == Self.now)
        }
    }

    @Test func aRenewalIsRemindedAgain() {
        let first = SweepStep.step(for: Self.due(lapsesIn: 60), now: Self.now)
        var renewed = Self.due(lapsesIn: 60)
        renewed.renewedAt = Self.now.addingTimeInterval(-10)
        let again = SweepStep.step(for: renewed, now: Self.now)
        guard case .remind(_, _, _, let firstKey) = first, case .remind(_, _, _, let againKey) = again else {
            Issue.record("\(String(describing: first)) \(String(describing: again))")
            return
        }
        #expect(firstKey != againKey, "each renewal's reminder is kept under a key of its own")
    }
}
