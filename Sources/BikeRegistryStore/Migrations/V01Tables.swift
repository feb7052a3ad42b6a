extension RegistrySchema {
    static let v1 = Migration(identifier: "v1") { dialect in
        [
            // Times are seconds since 1970. Keys and tokens are stored as SHA-256 hex, never in clear; the webhook
            // secret is kept, since signing needs it.
            """
            CREATE TABLE station (
                id \(dialect.generatedKey),
                name TEXT NOT NULL UNIQUE,
                keyHash TEXT NOT NULL UNIQUE,
                latitude DOUBLE PRECISION NOT NULL,
                longitude DOUBLE PRECISION NOT NULL,
                createdAt DOUBLE PRECISION NOT NULL,
                revokedAt DOUBLE PRECISION,
                lastRefreshAt DOUBLE PRECISION,
                lastSightingAt DOUBLE PRECISION,
                userAgent TEXT
            )
            """,
            """
            CREATE TABLE bike (
                id TEXT PRIMARY KEY,
                uuid TEXT NOT NULL,
                major INTEGER NOT NULL,
                minor INTEGER NOT NULL,
                make TEXT NOT NULL,
                model TEXT NOT NULL,
                colour TEXT NOT NULL,
                missing BOOLEAN NOT NULL DEFAULT FALSE,
                ownerTokenHash TEXT NOT NULL UNIQUE,
                webhookSecret TEXT NOT NULL,
                webhookURL TEXT,
                ntfyURL TEXT,
                createdAt DOUBLE PRECISION NOT NULL,
                UNIQUE (uuid, major, minor)
            )
            """,
            "CREATE INDEX bike_missing ON bike(missing)",
            // bikeId is what the station sent: a sighting of an unknown bike is kept too.
            """
            CREATE TABLE sighting (
                id TEXT PRIMARY KEY,
                stationId BIGINT NOT NULL REFERENCES station(id),
                bikeId TEXT NOT NULL,
                kind TEXT NOT NULL,
                seenAt DOUBLE PRECISION NOT NULL,
                firstSeen DOUBLE PRECISION NOT NULL,
                lastSeen DOUBLE PRECISION NOT NULL,
                proximity TEXT NOT NULL,
                rssi DOUBLE PRECISION,
                count BIGINT NOT NULL,
                visitId TEXT NOT NULL,
                receivedAt DOUBLE PRECISION NOT NULL
            )
            """,
            "CREATE INDEX sighting_bike ON sighting(bikeId, seenAt)",
            "CREATE INDEX sighting_received ON sighting(receivedAt)",
            // One row per message owed on one channel; its id is the webhook-id of every attempt.
            """
            CREATE TABLE notification (
                id TEXT PRIMARY KEY,
                bikeId TEXT NOT NULL REFERENCES bike(id) ON DELETE CASCADE,
                visitId TEXT NOT NULL,
                type TEXT NOT NULL,
                channel TEXT NOT NULL,
                target TEXT NOT NULL,
                payload TEXT NOT NULL,
                createdAt DOUBLE PRECISION NOT NULL,
                attempts INTEGER NOT NULL DEFAULT 0,
                nextAttemptAt DOUBLE PRECISION NOT NULL,
                deliveredAt DOUBLE PRECISION,
                abandonedAt DOUBLE PRECISION,
                lastError TEXT,
                UNIQUE (visitId, type, channel)
            )
            """,
            "CREATE INDEX notification_due ON notification(nextAttemptAt) WHERE deliveredAt IS NULL AND abandonedAt IS NULL",
            // Bumped by every change to the missing list, in the same transaction: the list's ETag.
            "CREATE TABLE listVersion (id INTEGER PRIMARY KEY CHECK (id = 1), version BIGINT NOT NULL)",
            "INSERT INTO listVersion (id, version) VALUES (1, 1)",
        ]
    }
}
