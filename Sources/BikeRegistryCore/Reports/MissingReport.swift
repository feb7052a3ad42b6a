public import Foundation

/// A bike's report of being missing (issue 38): what makes a bike "missing" for the stations, and what ends it. A
/// report lapses unless renewed, so a beacon someone planted and reported stops being followed without anyone's
/// action; and a bike may be reported at most 3 times in any 30 days.
public struct MissingReport: Sendable, Equatable {
    public enum Outcome: String, Sendable, CaseIterable {
        /// The owner has the bike back.
        case recovered
        /// The owner took the report back.
        case withdrawn
        /// Nobody renewed it in time.
        case lapsed
    }

    public var id: String
    public var bikeId: String
    public var madeAt: Date
    /// Made or last renewed: the lapse counts from here.
    public var renewedAt: Date
    /// Nil only for a report the upgrade made, until the server first sweeps (it sets `--missing-lapse` from then).
    public var lapsesAt: Date?
    public var details: MissingReportDetails
    public var reminderSentAt: Date?
    public var closedAt: Date?
    public var outcome: Outcome?

    public init(
        id: String, bikeId: String, madeAt: Date, renewedAt: Date, lapsesAt: Date?, details: MissingReportDetails,
        reminderSentAt: Date?, closedAt: Date?, outcome: Outcome?
    ) {
        self.id = id
        self.bikeId = bikeId
        self.madeAt = madeAt
        self.renewedAt = renewedAt
        self.lapsesAt = lapsesAt
        self.details = details
        self.reminderSentAt = reminderSentAt
        self.closedAt = closedAt
        self.outcome = outcome
    }
}

/// What an owner may say when reporting: each optional.
public struct MissingReportDetails: Sendable, Equatable {
    public var lastSeenAt: Date?
    public var lastSeenPlace: String?
    public var policeReference: String?
    public var policeForce: String?

    public init(
        lastSeenAt: Date? = nil, lastSeenPlace: String? = nil, policeReference: String? = nil,
        policeForce: String? = nil
    ) {
        self.lastSeenAt = lastSeenAt
        self.lastSeenPlace = lastSeenPlace
        self.policeReference = policeReference
        self.policeForce = policeForce
    }
}

/// The durations the rules use, the server's settings.
public struct MissingReportRules: Sendable, Equatable {
    /// From making or renewal to lapse (`--missing-lapse`, 30 days).
    public var lapse: TimeInterval
    /// How long before the lapse the owner is reminded (`--missing-reminder`, 3 days).
    public var reminder: TimeInterval
    /// Reports one bike may have made in any `window`.
    public var perWindow = 3
    public var window: TimeInterval = 30 * 86_400

    public init(lapse: TimeInterval = 30 * 86_400, reminder: TimeInterval = 3 * 86_400) {
        self.lapse = lapse
        self.reminder = reminder
    }

    /// When a bike whose reports in the window were made at `made` may make its next, if not now; nil when it may.
    public func nextAllowed(made: [Date], now: Date) -> Date? {
        let recent = made.filter { now.timeIntervalSince($0) < window }.sorted()
        guard recent.count >= perWindow else { return nil }
        return recent[recent.count - perWindow].addingTimeInterval(window)
    }
}

/// The operator's figures (`bike-registry stats`).
public struct ReportStats: Sendable, Equatable {
    public var made: Int
    public var open: Int
    public var lapsed: Int
    public var recovered: Int
    public var withdrawn: Int
    /// The median time from a report's making to the first sighting of its bike while it was open, over the reports
    /// whose bike was sighted (sightings are kept `--retention-days`).
    public var medianToFirstSighting: TimeInterval?
    /// Recovered reports whose bike was sighted while they were open.
    public var recoveredSighted: Int

    public init(
        made: Int, open: Int, lapsed: Int, recovered: Int, withdrawn: Int, medianToFirstSighting: TimeInterval?,
        recoveredSighted: Int
    ) {
        self.made = made
        self.open = open
        self.lapsed = lapsed
        self.recovered = recovered
        self.withdrawn = withdrawn
        self.medianToFirstSighting = medianToFirstSighting
        self.recoveredSighted = recoveredSighted
    }

    /// One report as the stores read it for the figures.
    package struct Row {
        package var madeAt: Double
        package var closed: Bool
        package var outcome: String?
        /// When its bike was first sighted while it was open, if it was.
        package var firstSighting: Double?

        package init(madeAt: Double, closed: Bool, outcome: String? = nil, firstSighting: Double? = nil) {
            self.madeAt = madeAt
            self.closed = closed
            self.outcome = outcome
            self.firstSighting = firstSighting
        }
    }

    package init(_ rows: [Row]) {
        self.init(
            made: rows.count, open: rows.filter { !$0.closed }.count,
            lapsed: rows.filter { $0.outcome == MissingReport.Outcome.lapsed.rawValue }.count,
            recovered: rows.filter { $0.outcome == MissingReport.Outcome.recovered.rawValue }.count,
            withdrawn: rows.filter { $0.outcome == MissingReport.Outcome.withdrawn.rawValue }.count,
            medianToFirstSighting: Self.median(rows.compactMap { row in row.firstSighting.map { $0 - row.madeAt } }),
            recoveredSighted: rows.filter {
                $0.outcome == MissingReport.Outcome.recovered.rawValue && $0.firstSighting != nil
            }.count)
    }

    /// The median of `values`, nil when there are none.
    package static func median(_ values: [TimeInterval]) -> TimeInterval? {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return nil }
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}

/// What a change asked of a bike came to.
public enum BikeUpdate: Sendable {
    case updated(Bike)
    /// The token is not this bike's owner's.
    case notOwner
    /// A report past `MissingReportRules.perWindow` in its window: the next may be made at this time.
    case tooManyReports(nextAllowed: Date)
    /// A renewal, or details, for a bike with no open report.
    case noOpenReport
}

/// What a sweep of the reports did (`sweepReports`).
public struct ReportSweep: Sendable, Equatable {
    public var reminded: Int
    public var lapsed: Int

    public init(reminded: Int, lapsed: Int) {
        self.reminded = reminded
        self.lapsed = lapsed
    }
}
