public import BikeRegistryCore
public import Foundation
import GRDB

extension SQLiteRegistryStore {
    public func update(id: String, ownerToken: String, _ change: BikeChange, rules: MissingReportRules, now: Date)
        async throws -> BikeUpdate
    {
        let hash = Secrets.hash(ownerToken)
        do {
            return try await write { db in
                guard
                    try Bool.fetchOne(
                        db, sql: "SELECT 1 FROM bike WHERE id = ? AND ownerTokenHash = ?", arguments: [id, hash])
                        == true
                else { return .notOwner }
                let open =
                    try Bool.fetchOne(
                        db, sql: "SELECT 1 FROM missingReport WHERE bikeId = ? AND closedAt IS NULL", arguments: [id])
                    == true
                let made = try Double.fetchAll(
                    db, sql: "SELECT madeAt FROM missingReport WHERE bikeId = ? AND madeAt > ?",
                    arguments: [id, Self.seconds(now) - rules.window]
                ).map(Self.date)
                let steps = try ReportStep.steps(for: change, open: open, made: made, rules: rules, now: now).get()
                for step in steps { try Self.apply(step, bikeId: id, rules: rules, now: now, db: db) }
                if let webhook = change.webhookURL {
                    try db.execute(sql: "UPDATE bike SET webhookURL = ? WHERE id = ?", arguments: [webhook, id])
                }
                if let ntfy = change.ntfyURL {
                    try db.execute(sql: "UPDATE bike SET ntfyURL = ? WHERE id = ?", arguments: [ntfy, id])
                }
                let bike = try Row.fetchOne(db, sql: "SELECT * FROM bike WHERE id = ?", arguments: [id]).map(
                    Bike.init(row:))
                return bike.map(BikeUpdate.updated) ?? .notOwner
            }
        } catch let refusal as BikeRefusal {
            return refusal.update
        }
    }

    private static func apply(_ step: ReportStep, bikeId: String, rules: MissingReportRules, now: Date, db: Database)
        throws
    {
        let at = seconds(now)
        switch step {
        case .make(let details):
            try db.execute(
                sql: """
                    INSERT INTO missingReport (id, bikeId, madeAt, renewedAt, lapsesAt, lastSeenAt, lastSeenPlace, policeReference, policeForce)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    Secrets.newID(prefix: "report_"), bikeId, at, at, at + rules.lapse,
                    details.lastSeenAt.map(seconds), details.lastSeenPlace, details.policeReference,
                    details.policeForce,
                ])
            try db.execute(sql: "UPDATE bike SET missing = TRUE WHERE id = ?", arguments: [bikeId])
            try bumpListVersion(db)
        case .amend(let details):
            try db.execute(
                sql: """
                    UPDATE missingReport SET lastSeenAt = ?, lastSeenPlace = ?, policeReference = ?, policeForce = ?
                    WHERE bikeId = ? AND closedAt IS NULL
                    """,
                arguments: [
                    details.lastSeenAt.map(seconds), details.lastSeenPlace, details.policeReference,
                    details.policeForce, bikeId,
                ])
        case .renew:
            try db.execute(
                sql: """
                    UPDATE missingReport SET renewedAt = ?, lapsesAt = ?, reminderSentAt = NULL
                    WHERE bikeId = ? AND closedAt IS NULL
                    """,
                arguments: [at, at + rules.lapse, bikeId])
        case .close(let outcome):
            try db.execute(
                sql: "UPDATE missingReport SET closedAt = ?, outcome = ? WHERE bikeId = ? AND closedAt IS NULL",
                arguments: [at, outcome.rawValue, bikeId])
            try db.execute(sql: "UPDATE bike SET missing = FALSE WHERE id = ?", arguments: [bikeId])
            try bumpListVersion(db)
        }
    }

    /// A deleted bike's reports: an open one is withdrawn, and the owner's words are cleared; the times and outcomes
    /// stay, for the operator's figures.
    static func forgetReports(of bikeId: String, db: Database, now: Date) throws {
        try db.execute(
            sql: """
                UPDATE missingReport SET closedAt = ?, outcome = ? WHERE bikeId = ? AND closedAt IS NULL
                """,
            arguments: [seconds(now), MissingReport.Outcome.withdrawn.rawValue, bikeId])
        try db.execute(
            sql: """
                UPDATE missingReport SET lastSeenAt = NULL, lastSeenPlace = NULL, policeReference = NULL, policeForce = NULL
                WHERE bikeId = ?
                """,
            arguments: [bikeId])
    }

    public func openReport(bikeId: String) async throws -> MissingReport? {
        try await pool.read { db in
            try Row.fetchOne(
                db, sql: "SELECT * FROM missingReport WHERE bikeId = ? AND closedAt IS NULL", arguments: [bikeId]
            ).map(MissingReport.init(row:))
        }
    }

    public func sweepReports(rules: MissingReportRules, now: Date) async throws -> ReportSweep {
        let at = Self.seconds(now)
        return try await write { db in
            try db.execute(
                sql: "UPDATE missingReport SET lapsesAt = renewedAt + ? WHERE lapsesAt IS NULL AND closedAt IS NULL",
                arguments: [rules.lapse])
            let due = try Row.fetchAll(
                db,
                sql: """
                    SELECT r.id, r.bikeId, r.renewedAt, r.lapsesAt, r.reminderSentAt,
                           CASE WHEN b.paused THEN NULL ELSE b.webhookURL END AS webhookURL,
                           CASE WHEN b.paused THEN NULL ELSE b.ntfyURL END AS ntfyURL,
                           CASE WHEN NOT b.paused AND b.emailState = 'confirmed' THEN b.email END AS email
                    FROM missingReport r JOIN bike b ON b.id = r.bikeId
                    WHERE r.closedAt IS NULL AND r.lapsesAt - ? <= ? ORDER BY r.lapsesAt
                    """,
                arguments: [rules.reminder, at])
            var sweep = ReportSweep(reminded: 0, lapsed: 0)
            for row in due {
                let id: String = row["id"]
                let bikeId: String = row["bikeId"]
                let lapsesAt = Self.date(row["lapsesAt"])
                let lapsed = lapsesAt <= now
                if !lapsed && (row["reminderSentAt"] as Double?) != nil { continue }
                let notice = ReportNotice(
                    type: lapsed ? .lapsed : .lapsing, timestamp: now, bikeId: bikeId, lapsesAt: lapsesAt)
                let key = lapsed ? id : MissingReport.reminderKey(id: id, renewedAt: Self.date(row["renewedAt"]))
                try Self.insert(
                    notice, key: key, webhook: row["webhookURL"], ntfy: row["ntfyURL"], email: row["email"], now: now,
                    db: db)
                if lapsed {
                    try db.execute(
                        sql: "UPDATE missingReport SET closedAt = ?, outcome = ? WHERE id = ?",
                        arguments: [at, MissingReport.Outcome.lapsed.rawValue, id])
                    try db.execute(sql: "UPDATE bike SET missing = FALSE WHERE id = ?", arguments: [bikeId])
                    sweep.lapsed += 1
                } else {
                    try db.execute(
                        sql: "UPDATE missingReport SET reminderSentAt = ? WHERE id = ?", arguments: [at, id])
                    sweep.reminded += 1
                }
            }
            if sweep.lapsed > 0 { try Self.bumpListVersion(db) }
            return sweep
        }
    }

    /// The notice's message on each of the bike's channels, kept once under `key`.
    static func insert(
        _ notice: ReportNotice, key: String, webhook: String?, ntfy: String?, email: String?, now: Date, db: Database
    ) throws {
        for row in notice.rows(reportId: key, webhook: webhook, ntfy: ntfy, email: email) {
            try db.execute(
                sql: """
                    INSERT INTO notification (id, bikeId, visitId, type, channel, target, payload, createdAt, nextAttemptAt)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING
                    """,
                arguments: [
                    row.id, notice.bikeId, key, notice.type.rawValue, row.channel.rawValue, row.target, notice.json(),
                    seconds(now), seconds(now),
                ])
        }
    }

    public func reportStats(now: Date) async throws -> ReportStats {
        try await pool.read { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT r.madeAt, r.closedAt, r.outcome,
                           (SELECT min(s.receivedAt) FROM sighting s
                            WHERE s.bikeId = r.bikeId AND s.receivedAt >= r.madeAt AND s.receivedAt <= coalesce(r.closedAt, ?))
                    FROM missingReport r
                    """,
                arguments: [Self.seconds(now)])
            return ReportStats(
                rows.map { row in
                    ReportStats.Row(
                        madeAt: row[0], closed: (row[1] as Double?) != nil, outcome: row[2], firstSighting: row[3])
                })
        }
    }
}

extension MissingReport {
    init(row: Row) {
        self.init(
            id: row["id"], bikeId: row["bikeId"], madeAt: SQLiteRegistryStore.date(row["madeAt"]),
            renewedAt: SQLiteRegistryStore.date(row["renewedAt"]),
            lapsesAt: (row["lapsesAt"] as Double?).map(SQLiteRegistryStore.date),
            details: MissingReportDetails(
                lastSeenAt: (row["lastSeenAt"] as Double?).map(SQLiteRegistryStore.date),
                lastSeenPlace: row["lastSeenPlace"], policeReference: row["policeReference"],
                policeForce: row["policeForce"]),
            reminderSentAt: (row["reminderSentAt"] as Double?).map(SQLiteRegistryStore.date),
            closedAt: (row["closedAt"] as Double?).map(SQLiteRegistryStore.date),
            outcome: (row["outcome"] as String?).flatMap(Outcome.init(rawValue:)))
    }
}
