public import Foundation
import GRDB

/// A bike as its owner registered it. `ownerTokenHash` never leaves the store.
public struct Bike: Sendable, Equatable {
    public var id: String
    public var uuid: String
    public var major: Int
    public var minor: Int
    public var make: String
    public var model: String
    public var colour: String
    public var missing: Bool
    public var webhookURL: String?
    public var ntfyURL: String?
    public var createdAt: Date

    init(row: Row) {
        id = row["id"]
        uuid = row["uuid"]
        major = row["major"]
        minor = row["minor"]
        make = row["make"]
        model = row["model"]
        colour = row["colour"]
        missing = row["missing"]
        webhookURL = row["webhookURL"]
        ntfyURL = row["ntfyURL"]
        createdAt = Date(timeIntervalSince1970: row["createdAt"])
    }
}

/// What an owner registers.
public struct NewBike: Sendable {
    public var uuid: String
    public var major: Int
    public var minor: Int
    public var make: String
    public var model: String
    public var colour: String

    public init(uuid: String, major: Int, minor: Int, make: String, model: String, colour: String) {
        self.uuid = uuid
        self.major = major
        self.minor = minor
        self.make = make
        self.model = model
        self.colour = colour
    }
}

/// The registration's answer: the two secrets are shown this once.
public struct Registration: Sendable {
    public var bike: Bike
    public var ownerToken: String
    public var webhookSecret: String
}

/// A change an owner asks for; nil leaves a field as it is, `.some(nil)` clears a notification target.
public struct BikeChange: Sendable {
    public var missing: Bool?
    public var webhookURL: String??
    public var ntfyURL: String??

    public init(missing: Bool? = nil, webhookURL: String?? = nil, ntfyURL: String?? = nil) {
        self.missing = missing
        self.webhookURL = webhookURL
        self.ntfyURL = ntfyURL
    }
}

/// What a station needs to match a missing bike, and to let café staff recognise it. No owner data.
public struct MissingBike: Sendable, Equatable {
    public var id: String
    public var uuid: String
    public var major: Int
    public var minor: Int
    public var make: String
    public var model: String
    public var colour: String
}

public enum RegisterOutcome: Sendable {
    case registered(Registration)
    /// Another bike has this beacon (UUID, major, minor).
    case beaconTaken
}

extension RegistryDatabase {
    public func register(_ new: NewBike, now: Date = Date()) async throws -> RegisterOutcome {
        let token = Secrets.newToken(prefix: "bko_")
        let secret = Secrets.newWebhookSecret()
        let id = Secrets.newID(prefix: "bike_")
        let uuid = new.uuid.uppercased()
        return try await pool.write { db in
            let taken = try Bool.fetchOne(
                db, sql: "SELECT 1 FROM bike WHERE uuid = ? AND major = ? AND minor = ?", arguments: [uuid, new.major, new.minor])
            if taken == true { return .beaconTaken }
            try db.execute(
                sql: """
                    INSERT INTO bike (id, uuid, major, minor, make, model, colour, ownerTokenHash, webhookSecret, createdAt)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [id, uuid, new.major, new.minor, new.make, new.model, new.colour, Secrets.hash(token), secret, Self.seconds(now)])
            let bike = try Row.fetchOne(db, sql: "SELECT * FROM bike WHERE id = ?", arguments: [id]).map(Bike.init(row:))!
            return .registered(Registration(bike: bike, ownerToken: token, webhookSecret: secret))
        }
    }

    /// The bike, when `ownerToken` is its owner's; nil for any other token or id alike, so a guess learns nothing.
    public func bike(id: String, ownerToken: String) async throws -> Bike? {
        let hash = Secrets.hash(ownerToken)
        return try await pool.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM bike WHERE id = ? AND ownerTokenHash = ?", arguments: [id, hash]).map(Bike.init(row:))
        }
    }

    /// Applies the owner's change; nil when the token is not this bike's owner's.
    public func update(id: String, ownerToken: String, _ change: BikeChange) async throws -> Bike? {
        let hash = Secrets.hash(ownerToken)
        return try await pool.write { db in
            guard let current = try Row.fetchOne(db, sql: "SELECT * FROM bike WHERE id = ? AND ownerTokenHash = ?", arguments: [id, hash]).map(Bike.init(row:))
            else { return nil }
            if let missing = change.missing, missing != current.missing {
                try db.execute(sql: "UPDATE bike SET missing = ? WHERE id = ?", arguments: [missing, id])
                try Self.bumpListVersion(db)
            }
            if let webhook = change.webhookURL { try db.execute(sql: "UPDATE bike SET webhookURL = ? WHERE id = ?", arguments: [webhook, id]) }
            if let ntfy = change.ntfyURL { try db.execute(sql: "UPDATE bike SET ntfyURL = ? WHERE id = ?", arguments: [ntfy, id]) }
            return try Row.fetchOne(db, sql: "SELECT * FROM bike WHERE id = ?", arguments: [id]).map(Bike.init(row:))
        }
    }

    /// Deletes the bike, its sightings and the notifications still owed for it. False when the token is not its owner's.
    public func delete(id: String, ownerToken: String) async throws -> Bool {
        let hash = Secrets.hash(ownerToken)
        return try await pool.write { db in
            guard let missing = try Bool.fetchOne(db, sql: "SELECT missing FROM bike WHERE id = ? AND ownerTokenHash = ?", arguments: [id, hash])
            else { return false }
            try db.execute(sql: "DELETE FROM sighting WHERE bikeId = ?", arguments: [id])
            try db.execute(sql: "DELETE FROM bike WHERE id = ?", arguments: [id])
            if missing { try Self.bumpListVersion(db) }
            return true
        }
    }

    /// The missing bikes and the list's version (its ETag), read together.
    public func missingBikes() async throws -> (version: Int64, bikes: [MissingBike]) {
        try await pool.read { db in
            let version = try Int64.fetchOne(db, sql: "SELECT version FROM listVersion") ?? 0
            let bikes = try Row.fetchAll(db, sql: "SELECT id, uuid, major, minor, make, model, colour FROM bike WHERE missing = 1 ORDER BY id").map {
                MissingBike(id: $0["id"], uuid: $0["uuid"], major: $0["major"], minor: $0["minor"], make: $0["make"], model: $0["model"], colour: $0["colour"])
            }
            return (version, bikes)
        }
    }

    public func listVersion() async throws -> Int64 {
        try await pool.read { db in try Int64.fetchOne(db, sql: "SELECT version FROM listVersion") ?? 0 }
    }

    static func bumpListVersion(_ db: Database) throws {
        try db.execute(sql: "UPDATE listVersion SET version = version + 1")
    }
}

extension RegistryDatabase {
    /// Whether `token` is any bike's owner token.
    public func isOwnerToken(_ token: String) async throws -> Bool {
        let hash = Secrets.hash(token)
        return try await pool.read { db in try Bool.fetchOne(db, sql: "SELECT 1 FROM bike WHERE ownerTokenHash = ?", arguments: [hash]) ?? false }
    }
}
