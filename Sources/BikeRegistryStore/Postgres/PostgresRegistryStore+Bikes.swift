public import BikeRegistryCore
public import Foundation
import Logging
import PostgresNIO

extension PostgresRegistryStore {
    static let bikeColumns =
        "id, uuid, major, minor, make, model, colour, missing, webhookURL, ntfyURL, createdAt, webhookSecret, paused, "
        + "email, emailState, emailFailure, emailUnsubscribeKey"

    public func register(_ new: NewBike, now: Date) async throws -> RegisterOutcome {
        let record = NewBikeRecord(new)
        let bike = record.bike
        let inserted = try await transaction { [logger] connection in
            let provisioned = try await connection.query(
                "SELECT 1 FROM beacon WHERE uuid = \(bike.uuid) AND major = \(bike.major) AND minor = \(bike.minor)",
                logger: logger
            ).collect()
            guard provisioned.isEmpty else { return false }
            return try await Self.insert(record, connection: connection, now: now, logger: logger)
        }
        return inserted ? .registered(record.registration(createdAt: now)) : .beaconTaken
    }

    /// Inserts the bike unless another holds its beacon; false if one does.
    static func insert(_ record: NewBikeRecord, connection: PostgresConnection, now: Date, logger: Logger)
        async throws -> Bool
    {
        let bike = record.bike
        let inserted = try await connection.query(
            """
            INSERT INTO bike (id, uuid, major, minor, make, model, colour, ownerTokenHash, webhookSecret, createdAt)
            VALUES (\(record.id), \(bike.uuid), \(bike.major), \(bike.minor), \(bike.make), \(bike.model), \(bike.colour),
                    \(Secrets.hash(record.ownerToken)), \(record.webhookSecret), \(seconds(now)))
            ON CONFLICT (uuid, major, minor) DO NOTHING RETURNING id
            """, logger: logger
        ).collect()
        return !inserted.isEmpty
    }

    public func bike(id: String, ownerToken: String) async throws -> Bike? {
        try await rows(
            "SELECT \(unescaped: Self.bikeColumns) FROM bike WHERE id = \(id) AND ownerTokenHash = \(Secrets.hash(ownerToken))"
        )
        .first.map(Bike.init(row:))
    }

    public func rotateOwnerToken(id: String, ownerToken: String) async throws -> String? {
        let new = Secrets.newOwnerToken()
        let rotated = try await rows(
            """
            UPDATE bike SET ownerTokenHash = \(Secrets.hash(new))
            WHERE id = \(id) AND ownerTokenHash = \(Secrets.hash(ownerToken)) RETURNING 1
            """)
        return rotated.isEmpty ? nil : new
    }

    public func delete(id: String, ownerToken: String) async throws -> Bool {
        let hash = Secrets.hash(ownerToken)
        return try await transaction { [logger] connection in
            let deleted = try await connection.query(
                "DELETE FROM bike WHERE id = \(id) AND ownerTokenHash = \(hash) RETURNING missing", logger: logger
            ).collect()
            guard let row = deleted.first else { return false }
            try await connection.query("DELETE FROM sighting WHERE bikeId = \(id)", logger: logger)
            // Its rotating beacon, if any, is freed for its code, as a fixed one is.
            try await connection.query(
                "UPDATE rotatingBeacon SET bikeId = NULL, clockOffset = 0 WHERE bikeId = \(id)", logger: logger)
            try await Self.forgetReports(of: id, connection: connection, now: Date(), logger: logger)
            if try row.decode(Bool.self) { try await Self.bumpListVersion(connection, logger: logger) }
            return true
        }
    }

    public func missingBikes() async throws -> (version: Int64, bikes: [MissingBike]) {
        // One transaction, REPEATABLE READ: the version and the list from the same snapshot, so the ETag names this list.
        try await transaction { [logger] connection in
            try await connection.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: logger)
            let version =
                try await connection.query("SELECT version FROM listVersion", logger: logger).collect().first?.decode(
                    Int64.self) ?? 0
            var bikes: [MissingBike] = []
            let rows = try await connection.query(
                """
                SELECT b.id, b.uuid, b.major, b.minor, b.make, b.model, b.colour,
                       r.id, r.uuid, r.period, r.sealedKey, r.clockOffset
                FROM bike b LEFT JOIN rotatingBeacon r ON r.bikeId = b.id WHERE b.missing ORDER BY b.id
                """, logger: logger
            )
            for try await row in rows.decode(
                (String, String, Int, Int, String, String, String, String?, String?, Int?, String?, Int64?).self)
            {
                let (id, uuid, major, minor, make, model, colour) = (row.0, row.1, row.2, row.3, row.4, row.5, row.6)
                var rotating: SealedRotatingBeacon?
                if let beacon = row.7, let region = row.8, let period = row.9, let sealed = row.10, let offset = row.11
                {
                    rotating = SealedRotatingBeacon(
                        id: beacon, uuid: region, period: period, sealedKey: sealed, clockOffset: offset)
                }
                bikes.append(
                    MissingBike(
                        id: id, uuid: uuid, major: major, minor: minor, make: make, model: model, colour: colour,
                        rotating: rotating))
            }
            return (version, bikes)
        }
    }

    public func versions() async throws -> RegistryVersions {
        guard
            let row = try await rows("SELECT (SELECT version FROM listVersion), (SELECT version FROM stationsVersion)")
                .first
        else {
            return RegistryVersions(list: 0, stations: 0)
        }
        let (list, stations) = try row.decode((Int64, Int64).self)
        return RegistryVersions(list: list, stations: stations)
    }

    public func isOwnerToken(_ token: String) async throws -> Bool {
        try await !rows("SELECT 1 FROM bike WHERE ownerTokenHash = \(Secrets.hash(token))").isEmpty
    }

    static func bumpListVersion(_ connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("UPDATE listVersion SET version = version + 1", logger: logger)
    }
}

extension Bike {
    /// A row of `PostgresRegistryStore.bikeColumns`.
    init(row: PostgresRow) throws {
        let (
            id, uuid, major, minor, make, model, colour, missing, webhookURL, ntfyURL, createdAt, webhookSecret, paused
        ) =
            try row.decode(
                (String, String, Int, Int, String, String, String, Bool, String?, String?, Double, String, Bool).self)
        self.init(
            id: id, uuid: uuid, major: major, minor: minor, make: make, model: model, colour: colour, missing: missing,
            webhookURL: webhookURL,
            ntfyURL: ntfyURL, createdAt: PostgresRegistryStore.date(createdAt), webhookSecret: webhookSecret,
            paused: paused)
        // The address's columns, by name: the tuple above is as long as PostgresNIO's decode takes.
        let columns = PostgresRandomAccessRow(row)
        email = OwnerEmail(
            address: try columns["email"].decode(String?.self), state: try columns["emailstate"].decode(String?.self),
            failure: try columns["emailfailure"].decode(String?.self),
            unsubscribeKey: try columns["emailunsubscribekey"].decode(String?.self))
    }
}
