public import BikeRegistryCore
public import Foundation
import GRDB

extension SQLiteRegistryStore {
    public func register(_ new: NewBike, now: Date) async throws -> RegisterOutcome {
        let record = NewBikeRecord(new)
        let inserted = try await write { db in
            let provisioned = try Bool.fetchOne(
                db, sql: "SELECT 1 FROM beacon WHERE uuid = ? AND major = ? AND minor = ?",
                arguments: [record.bike.uuid, record.bike.major, record.bike.minor])
            return provisioned == nil ? try Self.insert(record, db: db, now: now) : false
        }
        return inserted ? .registered(record.registration(createdAt: now)) : .beaconTaken
    }

    /// Inserts the bike unless another holds its beacon; false if one does.
    static func insert(_ record: NewBikeRecord, db: Database, now: Date) throws -> Bool {
        try db.execute(
            sql: """
                INSERT INTO bike (id, uuid, major, minor, make, model, colour, ownerTokenHash, webhookSecret, createdAt)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (uuid, major, minor) DO NOTHING
                """,
            arguments: [
                record.id, record.bike.uuid, record.bike.major, record.bike.minor, record.bike.make,
                record.bike.model, record.bike.colour,
                Secrets.hash(record.ownerToken), record.webhookSecret, seconds(now),
            ])
        return db.changesCount > 0
    }

    public func bike(id: String, ownerToken: String) async throws -> Bike? {
        let hash = Secrets.hash(ownerToken)
        return try await pool.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM bike WHERE id = ? AND ownerTokenHash = ?", arguments: [id, hash])
                .map(Bike.init(row:))
        }
    }

    public func rotateOwnerToken(id: String, ownerToken: String) async throws -> String? {
        let new = Secrets.newOwnerToken()
        let rotated = try await write { db in
            try db.execute(
                sql: "UPDATE bike SET ownerTokenHash = ? WHERE id = ? AND ownerTokenHash = ?",
                arguments: [Secrets.hash(new), id, Secrets.hash(ownerToken)])
            return db.changesCount > 0
        }
        return rotated ? new : nil
    }

    public func delete(id: String, ownerToken: String) async throws -> Bool {
        let hash = Secrets.hash(ownerToken)
        return try await write { db in
            guard
                let missing = try Bool.fetchOne(
                    db, sql: "SELECT missing FROM bike WHERE id = ? AND ownerTokenHash = ?", arguments: [id, hash])
            else { return false }
            try db.execute(sql: "DELETE FROM sighting WHERE bikeId = ?", arguments: [id])
            try db.execute(sql: "DELETE FROM bike WHERE id = ?", arguments: [id])
            // Its rotating beacon, if any, is freed for its code, as a fixed one is.
            try db.execute(
                sql: "UPDATE rotatingBeacon SET bikeId = NULL, clockOffset = 0 WHERE bikeId = ?", arguments: [id])
            try Self.forgetReports(of: id, db: db, now: Date())
            if missing { try Self.bumpListVersion(db) }
            return true
        }
    }

    public func missingBikes() async throws -> (version: Int64, bikes: [MissingBike]) {
        try await pool.read { db in
            let version = try Int64.fetchOne(db, sql: "SELECT version FROM listVersion") ?? 0
            let bikes = try Row.fetchAll(
                db,
                sql: """
                    SELECT b.id, b.uuid, b.major, b.minor, b.make, b.model, b.colour,
                           r.id, r.uuid, r.period, r.sealedKey, r.clockOffset
                    FROM bike b LEFT JOIN rotatingBeacon r ON r.bikeId = b.id WHERE b.missing ORDER BY b.id
                    """
            ).map { row in
                MissingBike(
                    id: row[0], uuid: row[1], major: row[2], minor: row[3], make: row[4], model: row[5],
                    colour: row[6],
                    rotating: (row[7] as String?).map {
                        SealedRotatingBeacon(
                            id: $0, uuid: row[8], period: row[9], sealedKey: row[10], clockOffset: row[11])
                    })
            }
            return (version, bikes)
        }
    }

    public func versions() async throws -> RegistryVersions {
        try await pool.read { db in
            let row = try Row.fetchOne(
                db, sql: "SELECT (SELECT version FROM listVersion), (SELECT version FROM stationsVersion)")
            return RegistryVersions(list: row?[0] ?? 0, stations: row?[1] ?? 0)
        }
    }

    public func isOwnerToken(_ token: String) async throws -> Bool {
        let hash = Secrets.hash(token)
        return try await pool.read { db in
            try Bool.fetchOne(db, sql: "SELECT 1 FROM bike WHERE ownerTokenHash = ?", arguments: [hash]) ?? false
        }
    }

    static func bumpListVersion(_ db: Database) throws {
        try db.execute(sql: "UPDATE listVersion SET version = version + 1")
    }
}

extension Bike {
    init(row: Row) {
        self.init(
            id: row["id"], uuid: row["uuid"], major: row["major"], minor: row["minor"], make: row["make"],
            model: row["model"],
            colour: row["colour"], missing: row["missing"], webhookURL: row["webhookURL"], ntfyURL: row["ntfyURL"],
            createdAt: SQLiteRegistryStore.date(row["createdAt"]), webhookSecret: row["webhookSecret"],
            paused: row["paused"],
            email: OwnerEmail(
                address: row["email"], state: row["emailState"], failure: row["emailFailure"],
                unsubscribeKey: row["emailUnsubscribeKey"]))
    }
}
