public import BikeRegistryCore
public import Foundation
import GRDB

extension SQLiteRegistryStore {
    public func changeEmail(id: String, ownerToken: String, to address: String?, limits: EmailLimits, now: Date)
        async throws -> EmailChange
    {
        let hash = Secrets.hash(ownerToken)
        let record = address.map(EmailChangeRecord.init(address:))
        return try await write { db in
            func bike() throws -> Bike? {
                try Row.fetchOne(
                    db, sql: "SELECT * FROM bike WHERE id = ? AND ownerTokenHash = ?", arguments: [id, hash]
                )
                .map(Bike.init(row:))
            }
            guard let current = try bike() else { return .notOwner }
            guard let record else {
                guard current.email != nil else { return .unchanged(current) }
                try db.execute(sql: "UPDATE bike SET \(EmailSQL.clearColumns) WHERE id = ?", arguments: [id])
                try Self.abandonEmail(bikeId: id, reason: "the address was removed", now: now, db: db)
                return try bike().map(EmailChange.removed) ?? .notOwner
            }
            if current.email?.address == record.address && current.email?.state == .confirmed {
                return .unchanged(current)
            }
            let at = Self.seconds(now)
            try db.execute(sql: "DELETE FROM emailConfirmation WHERE sentAt <= ?", arguments: [at - EmailSQL.day])
            let forBike =
                try Int.fetchOne(
                    db, sql: "SELECT count(*) FROM emailConfirmation WHERE bikeId = ?", arguments: [id]) ?? 0
            guard forBike < limits.perBikePerDay else { return .bikeLimited }
            let forAddress =
                try Int.fetchOne(
                    db, sql: "SELECT count(*) FROM emailConfirmation WHERE addressHash = ?",
                    arguments: [record.addressHash]) ?? 0
            guard forAddress < limits.perAddressPerDay else { return .addressLimited }
            try Self.abandonEmail(bikeId: id, reason: "the address was changed", now: now, db: db)
            let notice = record.notice(bikeId: id, limits: limits, now: now)
            try db.execute(
                sql: """
                    UPDATE bike SET email = ?, emailState = 'unconfirmed', emailFailure = NULL, emailUnsubscribeKey = ?,
                                    emailCodeHash = ?, emailCodeExpiresAt = ?
                    WHERE id = ?
                    """,
                arguments: [
                    record.address, record.unsubscribeKey, Secrets.hash(record.code), Self.seconds(notice.expiresAt),
                    id,
                ])
            try db.execute(
                sql: "INSERT INTO emailConfirmation (bikeId, addressHash, sentAt) VALUES (?, ?, ?)",
                arguments: [id, record.addressHash, at])
            try db.execute(
                sql: """
                    INSERT INTO notification (id, bikeId, visitId, type, channel, target, payload, createdAt, nextAttemptAt)
                    VALUES (?, ?, ?, ?, 'email', ?, ?, ?, ?) ON CONFLICT DO NOTHING
                    """,
                arguments: [
                    record.messageId, id, record.messageId, EmailConfirmationNotice.type, record.address,
                    notice.json(), at, at,
                ])
            return try bike().map(EmailChange.confirmationOwed) ?? .notOwner
        }
    }

    public func confirmEmail(code: String, now: Date) async throws -> Bool {
        try await write { db in
            try db.execute(
                sql: """
                    UPDATE bike SET emailState = 'confirmed', emailCodeHash = NULL, emailCodeExpiresAt = NULL
                    WHERE emailCodeHash = ? AND emailCodeExpiresAt > ? AND emailState = 'unconfirmed'
                    """,
                arguments: [Secrets.hash(code), Self.seconds(now)])
            return db.changesCount > 0
        }
    }

    public func unsubscribeEmail(key: String, now: Date) async throws -> Bool {
        try await write { db in
            guard
                let id = try String.fetchOne(
                    db, sql: "SELECT id FROM bike WHERE emailUnsubscribeKey = ?", arguments: [key])
            else { return false }
            try db.execute(sql: "UPDATE bike SET \(EmailSQL.clearColumns) WHERE id = ?", arguments: [id])
            try Self.abandonEmail(bikeId: id, reason: "unsubscribed", now: now, db: db)
            return true
        }
    }

    public func emailCounts() async throws -> EmailCounts {
        try await pool.read { db in
            let row = try Row.fetchOne(db, sql: EmailSQL.countsQuery)!
            return EmailCounts(confirmed: row[0], unconfirmed: row[1], failing: row[2])
        }
    }

    /// Every message still owed to the bike's address goes no further.
    static func abandonEmail(bikeId: String, reason: String, now: Date, db: Database) throws {
        try db.execute(
            sql: """
                UPDATE notification SET abandonedAt = ?, lastError = ?
                WHERE bikeId = ? AND channel = 'email' AND deliveredAt IS NULL AND abandonedAt IS NULL
                """,
            arguments: [seconds(now), reason, bikeId])
    }
}

extension SQLiteRegistryStore {
    public func bike(id: String) async throws -> Bike? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM bike WHERE id = ?", arguments: [id]).map(Bike.init(row:))
        }
    }

    public func bike(unsubscribeKey: String) async throws -> Bike? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM bike WHERE emailUnsubscribeKey = ?", arguments: [unsubscribeKey])
                .map(Bike.init(row:))
        }
    }
}
