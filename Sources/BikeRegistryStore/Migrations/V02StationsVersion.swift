extension RegistrySchema {
    static let v2 = Migration(identifier: "v2") { _ in
        [
            // Bumped by every station added or revoked, in the same transaction: a server keeps the stations in
            // memory and reloads them when this moves (RegistrySnapshot).
            "CREATE TABLE stationsVersion (id INTEGER PRIMARY KEY CHECK (id = 1), version BIGINT NOT NULL)",
            "INSERT INTO stationsVersion (id, version) VALUES (1, 1)",
            // A station's last sighting is read from its sightings (`station list`), no longer written to
            // station.lastSightingAt with each one: every sighting from one café updated the same row, and on
            // PostgreSQL its lock made that café's posts wait for each other's commits.
            "CREATE INDEX sighting_station ON sighting(stationId, receivedAt)",
        ]
    }
}
