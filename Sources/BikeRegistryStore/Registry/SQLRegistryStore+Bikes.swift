import BikeRegistryCore
import Foundation

extension SQLRegistryStore {
    public func register(_ new: NewBike, now: Date) async throws -> RegisterOutcome {
        let record = NewBikeRecord(new)
        let bike = record.bike
        let inserted = try await database.transaction { connection in
            guard
                try await !connection.exists(
                    "SELECT 1 FROM beacon WHERE uuid = \(bike.uuid) AND major = \(bike.major) AND minor = \(bike.minor)"
                )
            else { return false }
            return try await BikeSQL.insert(record, now: now, connection)
        }
        return inserted ? .registered(record.registration(createdAt: now)) : .beaconTaken
    }

    public func bike(id: String, ownerToken: String) async throws -> Bike? {
        try await reads.bike(where: "b.id = \(id) AND b.ownerTokenHash = \(Secrets.hash(ownerToken))")
    }

    public func bike(id: String) async throws -> Bike? { try await reads.bike(where: "b.id = \(id)") }

    public func bike(unsubscribeKey: String) async throws -> Bike? {
        try await reads.bike(
            where: """
                b.id = (SELECT bikeId FROM notificationTarget
                        WHERE unsubscribeKey = \(unsubscribeKey) AND channel = \(NotificationChannel.email.rawValue))
                """)
    }

    public func rotateOwnerToken(id: String, ownerToken: String) async throws -> String? {
        let new = Secrets.newOwnerToken()
        let rotated = try await database.write(
            """
            UPDATE bike SET ownerTokenHash = \(Secrets.hash(new))
            WHERE id = \(id) AND ownerTokenHash = \(Secrets.hash(ownerToken)) RETURNING id
            """)
        return rotated.isEmpty ? nil : new
    }

    public func delete(id: String, ownerToken: String, now: Date) async throws -> Bool {
        let hash = Secrets.hash(ownerToken)
        return try await database.transaction { connection in
            guard
                let deleted = try await connection.row(
                    "DELETE FROM bike WHERE id = \(id) AND ownerTokenHash = \(hash) RETURNING missing")
            else { return false }
            try await BikeSQL.forget(bikeId: id, wasMissing: try deleted.decode(0), now: now, connection)
            return true
        }
    }

    public func missingBikes() async throws -> (version: Int64, bikes: [MissingBike]) {
        // One snapshot: the version and the list together, so the ETag names this list.
        try await database.snapshot { connection in
            let version: Int64 = try await connection.row("SELECT version FROM listVersion")?.decode(0) ?? 0
            let bikes = try await connection.rows(
                """
                SELECT b.id, b.uuid, b.major, b.minor, b.make, b.model, b.colour,
                       r.id, r.uuid, r.period, r.sealedKey, r.clockOffset
                FROM bike b LEFT JOIN rotatingBeacon r ON r.bikeId = b.id WHERE b.missing ORDER BY b.id
                """
            ).map { row in
                let beacon: String? = try row.decode(7)
                return MissingBike(
                    id: try row.decode(0), uuid: try row.decode(1), major: try row.decode(2), minor: try row.decode(3),
                    make: try row.decode(4), model: try row.decode(5), colour: try row.decode(6),
                    rotating: try beacon.map { id in
                        SealedRotatingBeacon(
                            id: id, uuid: try row.decode(8), period: try row.decode(9), sealedKey: try row.decode(10),
                            clockOffset: try row.decode(11))
                    })
            }
            return (version, bikes)
        }
    }

    public func versions() async throws -> RegistryVersions {
        guard
            let row = try await database.readRow(
                "SELECT (SELECT version FROM listVersion), (SELECT version FROM stationsVersion)")
        else { return RegistryVersions(list: 0, stations: 0) }
        return RegistryVersions(list: try row.decode(0), stations: try row.decode(1))
    }

    public func isOwnerToken(_ token: String) async throws -> Bool {
        try await reads.exists("SELECT 1 FROM bike WHERE ownerTokenHash = \(Secrets.hash(token))")
    }
}

/// A bike's statements that more than one transaction runs.
enum BikeSQL {
    /// Inserts the bike unless another holds its beacon; false if one does.
    static func insert(_ record: NewBikeRecord, now: Date, _ connection: any SQLConnection) async throws -> Bool {
        let bike = record.bike
        return try await connection.exists(
            """
            INSERT INTO bike (id, uuid, major, minor, make, model, colour, ownerTokenHash, webhookSecret, createdAt)
            VALUES (\(record.id), \(bike.uuid), \(bike.major), \(bike.minor), \(bike.make), \(bike.model), \(bike.colour),
                    \(Secrets.hash(record.ownerToken)), \(record.webhookSecret), \(now))
            ON CONFLICT (uuid, major, minor) DO NOTHING RETURNING id
            """)
    }

    /// What stays of a bike once its row is deleted (its targets and messages go with it): its sightings go too,
    /// its rotating beacon, if any, is freed for its code as a fixed one is, its reports are forgotten, and the
    /// list moves if it was missing.
    static func forget(bikeId id: String, wasMissing: Bool, now: Date, _ connection: any SQLConnection) async throws {
        try await connection.execute("DELETE FROM sighting WHERE bikeId = \(id)")
        try await connection.execute("UPDATE rotatingBeacon SET bikeId = NULL, clockOffset = 0 WHERE bikeId = \(id)")
        for statement in RegistrySQL.forgetReports(of: id, now: now) { try await connection.execute(statement) }
        if wasMissing { try await connection.execute(RegistrySQL.bumpListVersion) }
    }
}
