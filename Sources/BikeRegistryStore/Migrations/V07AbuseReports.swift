extension RegistrySchema {
    static let v7AbuseReports = Migration(identifier: "v7-abuse-reports") { _ in
        [
            // A paused bike's sightings are stored, and tell its owner nothing, until the operator resolves the
            // finder's report.
            "ALTER TABLE bike ADD COLUMN paused BOOLEAN NOT NULL DEFAULT FALSE",
            """
            CREATE TABLE abuseReport (
                id TEXT PRIMARY KEY,
                bikeId TEXT NOT NULL,
                uuid TEXT NOT NULL,
                major INTEGER NOT NULL,
                minor INTEGER NOT NULL,
                message TEXT,
                madeAt DOUBLE PRECISION NOT NULL,
                resolvedAt DOUBLE PRECISION,
                resolution TEXT
            )
            """,
            "CREATE INDEX abuseReport_bike ON abuseReport(bikeId)",
        ]
    }
}
