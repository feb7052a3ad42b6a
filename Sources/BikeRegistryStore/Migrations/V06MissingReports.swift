extension RegistrySchema {
    static let v6MissingReports = Migration(identifier: "v6-missing-reports") { dialect in
        [
            // A bike is missing while it has an open report (bike.missing, which the stations' list reads, is
            // set and cleared with it). Reports outlive their bike for the operator's figures; its details (the
            // owner's words) are cleared when the bike is deleted.
            """
            CREATE TABLE missingReport (
                id TEXT PRIMARY KEY,
                bikeId TEXT NOT NULL,
                madeAt DOUBLE PRECISION NOT NULL,
                renewedAt DOUBLE PRECISION NOT NULL,
                lapsesAt DOUBLE PRECISION,
                lastSeenAt DOUBLE PRECISION,
                lastSeenPlace TEXT,
                policeReference TEXT,
                policeForce TEXT,
                reminderSentAt DOUBLE PRECISION,
                closedAt DOUBLE PRECISION,
                outcome TEXT
            )
            """,
            "CREATE INDEX missingReport_bike ON missingReport(bikeId, madeAt)",
            "CREATE INDEX missingReport_open ON missingReport(lapsesAt) WHERE closedAt IS NULL",
            // A bike missing before reports gets one made now; the server's first sweep sets when it lapses
            // (--missing-lapse from now), so its owner is reminded before it does.
            """
            INSERT INTO missingReport (id, bikeId, madeAt, renewedAt)
            SELECT 'report_' || id, id, \(dialect.now), \(dialect.now) FROM bike WHERE missing
            """,
        ]
    }
}
