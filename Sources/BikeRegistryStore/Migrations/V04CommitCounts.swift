extension RegistrySchema {
    static let v4CommitCounts = Migration(identifier: "v4-commit-counts") { dialect in
        guard dialect == .sqlite else { return [] }
        // A SQLite file's own count of what it has committed, by kind (CommitLedger): each counter moves in the
        // transaction that makes the change, so a commit and its count are lost together or not at all. Rows
        // already there are counted once. PostgreSQL keeps its own write-ahead log safe.
        let counters: [(name: String, event: String, table: String, initial: String)] = [
            ("sightings", "INSERT", "sighting", "(SELECT count(*) FROM sighting)"),
            ("registrations", "INSERT", "bike", "(SELECT count(*) FROM bike)"),
            ("bikeChanges", "UPDATE", "bike", "0"),
            ("bikeDeletions", "DELETE", "bike", "0"),
            ("stationChanges", "INSERT", "station", "(SELECT count(*) FROM station)"),
            ("stationChanges", "UPDATE", "station", ""),
            ("notifications", "INSERT", "notification", "(SELECT count(*) FROM notification)"),
            ("notificationAttempts", "UPDATE", "notification", "0"),
        ]
        return ["CREATE TABLE commitCount (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID"]
            + counters.filter { !$0.initial.isEmpty }.map {
                "INSERT INTO commitCount (name, value) VALUES ('\($0.name)', \($0.initial))"
            }
            + counters.map {
                """
                CREATE TRIGGER count_\($0.table)_\($0.event.lowercased()) AFTER \($0.event) ON \($0.table)
                BEGIN UPDATE commitCount SET value = value + 1 WHERE name = '\($0.name)'; END
                """
            }
    }
}
