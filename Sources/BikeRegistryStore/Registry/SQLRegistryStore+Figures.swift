import BikeRegistryCore
public import Foundation

extension SQLRegistryStore {
    /// Counts and no more, read at one moment: what a scrape of `serve --metrics-listen` and `bike-registry status`
    /// show. Four aggregates over indexed or small tables; no bike, owner or target is named.
    public func operatorFigures() async throws -> OperatorFigures {
        try await database.snapshot { connection in
            let bikes = try await connection.row("SELECT count(*), count(*) FILTER (WHERE missing) FROM bike")
            let reports = try await connection.row(
                """
                SELECT count(*), count(*) FILTER (WHERE closedAt IS NULL),
                       count(*) FILTER (WHERE outcome = \(MissingReport.Outcome.lapsed.rawValue))
                FROM missingReport
                """)
            let owed = try await connection.rows(
                """
                SELECT channel, count(*), min(createdAt) FROM notification
                WHERE deliveredAt IS NULL AND abandonedAt IS NULL GROUP BY channel ORDER BY channel
                """)
            let failing = try await connection.rows(
                """
                SELECT channel, count(*) FROM notificationTarget
                WHERE state = \(NotificationTarget.State.failing.rawValue) GROUP BY channel ORDER BY channel
                """)
            return OperatorFigures(
                bikes: try bikes?.decode(0) ?? 0, missingBikes: try bikes?.decode(1) ?? 0,
                reportsMade: try reports?.decode(0) ?? 0, reportsOpen: try reports?.decode(1) ?? 0,
                reportsLapsed: try reports?.decode(2) ?? 0,
                owed: try owed.map { row in
                    OperatorFigures.Owed(
                        channel: try row.decode(0), messages: try row.decode(1), oldest: try row.decode(2))
                },
                failingTargets: Dictionary(
                    uniqueKeysWithValues: try failing.map { (try $0.decode(0), try $0.decode(1)) }))
        }
    }
}

/// The registry's counts for its operator (`RegistryStore.operatorFigures`).
public struct OperatorFigures: Sendable, Equatable {
    public var bikes: Int
    public var missingBikes: Int
    /// Missing reports ever made (while their bikes are registered), open now, and closed by lapsing.
    public var reportsMade: Int
    public var reportsOpen: Int
    public var reportsLapsed: Int
    /// The messages owed, by channel: none listed for a channel that owes nothing.
    public var owed: [Owed]
    /// Targets a channel refused for good (a mail relay's 5xx), by channel: their messages go nowhere until the
    /// owner changes them.
    public var failingTargets: [String: Int]

    public struct Owed: Sendable, Equatable {
        public var channel: String
        public var messages: Int
        /// When the oldest of them was made.
        public var oldest: Date?

        public init(channel: String, messages: Int, oldest: Date?) {
            self.channel = channel
            self.messages = messages
            self.oldest = oldest
        }
    }

    public init(
        bikes: Int, missingBikes: Int, reportsMade: Int, reportsOpen: Int, reportsLapsed: Int, owed: [Owed],
        failingTargets: [String: Int]
    ) {
        self.failingTargets = failingTargets
        self.bikes = bikes
        self.missingBikes = missingBikes
        self.reportsMade = reportsMade
        self.reportsOpen = reportsOpen
        self.reportsLapsed = reportsLapsed
        self.owed = owed
    }
}
