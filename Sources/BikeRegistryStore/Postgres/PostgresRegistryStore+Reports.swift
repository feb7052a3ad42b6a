public import BikeRegistryCore
public import Foundation
import Logging
import PostgresNIO

extension PostgresRegistryStore {
    static let reportColumns = """
        id, bikeId, madeAt, renewedAt, lapsesAt, lastSeenAt, lastSeenPlace, policeReference, policeForce,
        reminderSentAt, closedAt, outcome
        """

    public func update(id: String, ownerToken: String, _ change: BikeChange, rules: MissingReportRules, now: Date)
        async throws -> BikeUpdate
    {
        let hash = Secrets.hash(ownerToken)
        // A refusal is returned, not thrown: the transaction then commits nothing of the change (nothing was written
        // before it), and the answer keeps its type.
        return try await transaction { [logger] connection in
            // The bike's row locked first: two changes of one bike's report at once are made one after the other.
            let owned = try await connection.query(
                "SELECT 1 FROM bike WHERE id = \(id) AND ownerTokenHash = \(hash) FOR UPDATE", logger: logger)
            guard try await owned.collect().count == 1 else { return .notOwner }
            let open = try await !connection.query(
                "SELECT 1 FROM missingReport WHERE bikeId = \(id) AND closedAt IS NULL", logger: logger
            ).collect().isEmpty
            var made: [Date] = []
            for try await seconds in try await connection.query(
                "SELECT madeAt FROM missingReport WHERE bikeId = \(id) AND madeAt > \(Self.seconds(now) - rules.window)",
                logger: logger
            ).decode(Double.self) {
                made.append(Self.date(seconds))
            }
            let steps: [ReportStep]
            switch ReportStep.steps(for: change, open: open, made: made, rules: rules, now: now) {
            case .failure(let refusal): return refusal.update
            case .success(let decided): steps = decided
            }
            for step in steps {
                try await Self.apply(step, bikeId: id, rules: rules, now: now, connection: connection, logger: logger)
            }
            if let webhook = change.webhookURL {
                try await connection.query("UPDATE bike SET webhookURL = \(webhook) WHERE id = \(id)", logger: logger)
            }
            if let ntfy = change.ntfyURL {
                try await connection.query("UPDATE bike SET ntfyURL = \(ntfy) WHERE id = \(id)", logger: logger)
            }
            let bike = try await connection.query(
                "SELECT \(unescaped: Self.bikeColumns) FROM bike WHERE id = \(id)", logger: logger
            ).collect().first.map(Bike.init(row:))
            return bike.map(BikeUpdate.updated) ?? .notOwner
        }
    }

    private static func apply(
        _ step: ReportStep, bikeId: String, rules: MissingReportRules, now: Date, connection: PostgresConnection,
        logger: Logger
    ) async throws {
        let at = seconds(now)
        switch step {
        case .make(let details):
            try await connection.query(
                """
                INSERT INTO missingReport (id, bikeId, madeAt, renewedAt, lapsesAt, lastSeenAt, lastSeenPlace, policeReference, policeForce)
                VALUES (\(Secrets.newID(prefix: "report_")), \(bikeId), \(at), \(at), \(at + rules.lapse),
                        \(details.lastSeenAt.map(seconds)), \(details.lastSeenPlace), \(details.policeReference),
                        \(details.policeForce))
                """, logger: logger)
            try await connection.query("UPDATE bike SET missing = TRUE WHERE id = \(bikeId)", logger: logger)
            try await bumpListVersion(connection, logger: logger)
        case .amend(let details):
            try await connection.query(
                """
                UPDATE missingReport SET lastSeenAt = \(details.lastSeenAt.map(seconds)),
                    lastSeenPlace = \(details.lastSeenPlace), policeReference = \(details.policeReference),
                    policeForce = \(details.policeForce)
                WHERE bikeId = \(bikeId) AND closedAt IS NULL
                """, logger: logger)
        case .renew:
            try await connection.query(
                """
                UPDATE missingReport SET renewedAt = \(at), lapsesAt = \(at + rules.lapse), reminderSentAt = NULL
                WHERE bikeId = \(bikeId) AND closedAt IS NULL
                """, logger: logger)
        case .close(let outcome):
            try await connection.query(
                """
                UPDATE missingReport SET closedAt = \(at), outcome = \(outcome.rawValue)
                WHERE bikeId = \(bikeId) AND closedAt IS NULL
                """, logger: logger)
            try await connection.query("UPDATE bike SET missing = FALSE WHERE id = \(bikeId)", logger: logger)
            try await bumpListVersion(connection, logger: logger)
        }
    }

    /// A deleted bike's reports: an open one is withdrawn, and the owner's words are cleared; the times and outcomes
    /// stay, for the operator's figures.
    static func forgetReports(of bikeId: String, connection: PostgresConnection, now: Date, logger: Logger)
        async throws
    {
        try await connection.query(
            """
            UPDATE missingReport SET closedAt = \(seconds(now)), outcome = \(MissingReport.Outcome.withdrawn.rawValue)
            WHERE bikeId = \(bikeId) AND closedAt IS NULL
            """, logger: logger)
        try await connection.query(
            """
            UPDATE missingReport SET lastSeenAt = NULL, lastSeenPlace = NULL, policeReference = NULL, policeForce = NULL
            WHERE bikeId = \(bikeId)
            """, logger: logger)
    }

    public func openReport(bikeId: String) async throws -> MissingReport? {
        try await rows(
            "SELECT \(unescaped: Self.reportColumns) FROM missingReport WHERE bikeId = \(bikeId) AND closedAt IS NULL"
        ).first.map(MissingReport.init(row:))
    }

    public func sweepReports(rules: MissingReportRules, now: Date) async throws -> ReportSweep {
        let at = Self.seconds(now)
        return try await transaction { [logger] connection in
            try await connection.query(
                """
                UPDATE missingReport SET lapsesAt = renewedAt + \(rules.lapse) WHERE lapsesAt IS NULL AND closedAt IS NULL
                """, logger: logger)
            // Locked as taken, and skipped by another server sweeping at the same moment.
            let due = try await connection.query(
                """
                SELECT r.id, r.bikeId, r.renewedAt, r.lapsesAt, r.reminderSentAt,
                           CASE WHEN b.paused THEN NULL ELSE b.webhookURL END AS webhookURL,
                           CASE WHEN b.paused THEN NULL ELSE b.ntfyURL END AS ntfyURL,
                           CASE WHEN NOT b.paused AND b.emailState = 'confirmed' THEN b.email END AS email
                FROM missingReport r JOIN bike b ON b.id = r.bikeId
                WHERE r.closedAt IS NULL AND r.lapsesAt - \(rules.reminder) <= \(at) ORDER BY r.lapsesAt
                FOR UPDATE OF r SKIP LOCKED
                """, logger: logger
            ).collect()
            var sweep = ReportSweep(reminded: 0, lapsed: 0)
            for row in due {
                let (id, bikeId, renewedAt, lapsesAtSeconds, reminderSentAt, webhook, ntfy, email) = try row.decode(
                    (String, String, Double, Double, Double?, String?, String?, String?).self)
                let lapsesAt = Self.date(lapsesAtSeconds)
                let lapsed = lapsesAt <= now
                if !lapsed && reminderSentAt != nil { continue }
                let notice = ReportNotice(
                    type: lapsed ? .lapsed : .lapsing, timestamp: now, bikeId: bikeId, lapsesAt: lapsesAt)
                let key = lapsed ? id : MissingReport.reminderKey(id: id, renewedAt: Self.date(renewedAt))
                try await Self.insert(
                    notice, key: key, webhook: webhook, ntfy: ntfy, email: email, now: now, connection: connection,
                    logger: logger)
                if lapsed {
                    try await connection.query(
                        """
                        UPDATE missingReport SET closedAt = \(at), outcome = \(MissingReport.Outcome.lapsed.rawValue)
                        WHERE id = \(id)
                        """, logger: logger)
                    try await connection.query("UPDATE bike SET missing = FALSE WHERE id = \(bikeId)", logger: logger)
                    sweep.lapsed += 1
                } else {
                    try await connection.query(
                        "UPDATE missingReport SET reminderSentAt = \(at) WHERE id = \(id)", logger: logger)
                    sweep.reminded += 1
                }
            }
            if sweep.lapsed > 0 { try await Self.bumpListVersion(connection, logger: logger) }
            return sweep
        }
    }

    /// The notice's message on each of the bike's channels, kept once under `key`.
    static func insert(
        _ notice: ReportNotice, key: String, webhook: String?, ntfy: String?, email: String?, now: Date,
        connection: PostgresConnection,
        logger: Logger
    ) async throws {
        for row in notice.rows(reportId: key, webhook: webhook, ntfy: ntfy, email: email) {
            try await connection.query(
                """
                INSERT INTO notification (id, bikeId, visitId, type, channel, target, payload, createdAt, nextAttemptAt)
                VALUES (\(row.id), \(notice.bikeId), \(key), \(notice.type.rawValue), \(row.channel.rawValue),
                        \(row.target), \(notice.json()), \(seconds(now)), \(seconds(now)))
                ON CONFLICT DO NOTHING
                """, logger: logger)
        }
    }

    public func reportStats(now: Date) async throws -> ReportStats {
        let rows = try await rows(
            """
            SELECT r.madeAt, r.closedAt IS NOT NULL, r.outcome,
                   (SELECT min(s.receivedAt) FROM sighting s
                    WHERE s.bikeId = r.bikeId AND s.receivedAt >= r.madeAt AND s.receivedAt <= coalesce(r.closedAt, \(Self.seconds(now))))
            FROM missingReport r
            """)
        return ReportStats(
            try rows.map { row in
                let (madeAt, closed, outcome, first) = try row.decode((Double, Bool, String?, Double?).self)
                return ReportStats.Row(madeAt: madeAt, closed: closed, outcome: outcome, firstSighting: first)
            })
    }
}

extension MissingReport {
    init(row: PostgresRow) throws {
        let r = try row.decode(
            (String, String, Double, Double, Double?, Double?, String?, String?, String?, Double?, Double?, String?)
                .self)
        let date = PostgresRegistryStore.date
        self.init(
            id: r.0, bikeId: r.1, madeAt: date(r.2), renewedAt: date(r.3), lapsesAt: r.4.map(date),
            details: MissingReportDetails(
                lastSeenAt: r.5.map(date), lastSeenPlace: r.6, policeReference: r.7, policeForce: r.8),
            reminderSentAt: r.9.map(date), closedAt: r.10.map(date), outcome: r.11.flatMap(Outcome.init(rawValue:)))
    }
}
