import BikeRegistryCore
import Foundation

extension SQLRegistryStore {
    public func update(id: String, ownerToken: String, _ change: BikeChange, rules: MissingReportRules, now: Date)
        async throws -> BikeUpdate
    {
        let hash = Secrets.hash(ownerToken)
        // A refusal is returned, not thrown: nothing was written before it, so the transaction commits nothing of
        // the change, and the answer keeps its type.
        return try await database.transaction { connection in
            // The bike's row locked first (PostgreSQL): two changes of one bike's report are made one after the other.
            guard
                try await connection.exists(
                    "SELECT 1 FROM bike WHERE id = \(id) AND ownerTokenHash = \(hash) \(SQL.forUpdate)")
            else { return .notOwner }
            let open = try await connection.exists(
                "SELECT 1 FROM missingReport WHERE bikeId = \(id) AND closedAt IS NULL")
            let made: [Date] = try await connection.rows(
                "SELECT madeAt FROM missingReport WHERE bikeId = \(id) AND madeAt > \(now.addingTimeInterval(-rules.window))"
            ).map { try $0.decode(0) }
            switch ReportStep.steps(for: change, open: open, made: made, rules: rules, now: now) {
            case .failure(let refusal): return refusal.update
            case .success(let steps):
                for step in steps {
                    for statement in ReportSQL.apply(step, bikeId: id, rules: rules, now: now) {
                        try await connection.execute(statement)
                    }
                }
            }
            for (channel, target) in change.targets {
                try await connection.execute(TargetSQL.save(channel, target, bikeId: id))
            }
            return try await connection.bike(where: "b.id = \(id)").map(BikeUpdate.updated) ?? .notOwner
        }
    }

    public func openReport(bikeId: String) async throws -> MissingReport? {
        try await database.readRow("\(ReportRows.select) WHERE bikeId = \(bikeId) AND closedAt IS NULL")
            .map(ReportRows.report)
    }

    public func sweepReports(rules: MissingReportRules, now: Date) async throws -> ReportSweep {
        try await database.transaction { connection in
            try await connection.execute(
                "UPDATE missingReport SET lapsesAt = renewedAt + \(rules.lapse) WHERE lapsesAt IS NULL AND closedAt IS NULL"
            )
            // Locked as taken, and skipped by another server sweeping at the same moment (PostgreSQL).
            let due = try await connection.rows(
                """
                SELECT id, bikeId, renewedAt, lapsesAt, reminderSentAt FROM missingReport
                WHERE closedAt IS NULL AND lapsesAt - \(rules.reminder) <= \(now) ORDER BY lapsesAt
                \(SQL(sqlite: "", postgres: "FOR UPDATE SKIP LOCKED"))
                """
            ).map { row in
                SweepStep.Due(
                    id: try row.decode(0), bikeId: try row.decode(1), renewedAt: try row.decode(2),
                    lapsesAt: try row.decode(3), reminderSentAt: try row.decode(4))
            }
            var sweep = ReportSweep(reminded: 0, lapsed: 0)
            for step in due.compactMap({ SweepStep.step(for: $0, now: now) }) {
                for statement in ReportSQL.apply(step, now: now) { try await connection.execute(statement) }
                if case .lapse = step { sweep.lapsed += 1 } else { sweep.reminded += 1 }
            }
            if sweep.lapsed > 0 { try await connection.execute(RegistrySQL.bumpListVersion) }
            return sweep
        }
    }

    public func reportStats(now: Date) async throws -> ReportStats {
        let rows = try await database.read(
            """
            SELECT r.madeAt, r.closedAt IS NOT NULL, r.outcome,
                   (SELECT min(s.receivedAt) FROM sighting s
                    WHERE s.bikeId = r.bikeId AND s.receivedAt >= r.madeAt AND s.receivedAt <= coalesce(r.closedAt, \(now)))
            FROM missingReport r
            """)
        return ReportStats(
            try rows.map { row in
                ReportStats.Row(
                    madeAt: try row.decode(0), closed: try row.decode(1), outcome: try row.decode(2),
                    firstSighting: try row.decode(3))
            })
    }
}

/// What each report step writes.
enum ReportSQL {
    static func apply(_ step: ReportStep, bikeId: String, rules: MissingReportRules, now: Date) -> [SQL] {
        let lapses = now.addingTimeInterval(rules.lapse)
        switch step {
        case .make(let details):
            return [
                """
                INSERT INTO missingReport (id, bikeId, madeAt, renewedAt, lapsesAt, lastSeenAt, lastSeenPlace, policeReference, policeForce)
                VALUES (\(Secrets.newID(prefix: "report_")), \(bikeId), \(now), \(now), \(lapses), \(details.lastSeenAt),
                        \(details.lastSeenPlace), \(details.policeReference), \(details.policeForce))
                """,
                "UPDATE bike SET missing = TRUE WHERE id = \(bikeId)", RegistrySQL.bumpListVersion,
            ]
        case .amend(let details):
            return [
                """
                UPDATE missingReport SET lastSeenAt = \(details.lastSeenAt), lastSeenPlace = \(details.lastSeenPlace),
                    policeReference = \(details.policeReference), policeForce = \(details.policeForce)
                WHERE bikeId = \(bikeId) AND closedAt IS NULL
                """
            ]
        case .renew:
            return [
                """
                UPDATE missingReport SET renewedAt = \(now), lapsesAt = \(lapses), reminderSentAt = NULL
                WHERE bikeId = \(bikeId) AND closedAt IS NULL
                """
            ]
        case .close(let outcome):
            return [
                """
                UPDATE missingReport SET closedAt = \(now), outcome = \(outcome.rawValue)
                WHERE bikeId = \(bikeId) AND closedAt IS NULL
                """,
                "UPDATE bike SET missing = FALSE WHERE id = \(bikeId)", RegistrySQL.bumpListVersion,
            ]
        }
    }

    /// The step's message on each of the bike's targets (none while it is paused), and the report's change.
    static func apply(_ step: SweepStep, now: Date) -> [SQL] {
        switch step {
        case .remind(let reportId, let bikeId, let notice, let key):
            return [
                NotificationSQL.owe(notice, key: key, bikeId: bikeId, unlessPaused: true, now: now),
                "UPDATE missingReport SET reminderSentAt = \(now) WHERE id = \(reportId)",
            ]
        case .lapse(let reportId, let bikeId, let notice):
            return [
                NotificationSQL.owe(notice, key: reportId, bikeId: bikeId, unlessPaused: true, now: now),
                """
                UPDATE missingReport SET closedAt = \(now), outcome = \(MissingReport.Outcome.lapsed.rawValue)
                WHERE id = \(reportId)
                """,
                "UPDATE bike SET missing = FALSE WHERE id = \(bikeId)",
            ]
        }
    }
}
