public import BikeRegistryCore
public import Foundation
import Logging
import PostgresNIO

extension PostgresRegistryStore {
    public func changeEmail(id: String, ownerToken: String, to address: String?, limits: EmailLimits, now: Date)
        async throws -> EmailChange
    {
        let hash = Secrets.hash(ownerToken)
        let record = address.map(EmailChangeRecord.init(address:))
        return try await transaction { [logger] connection in
            func bike(lock: Bool = false) async throws -> Bike? {
                try await connection.query(
                    """
                    SELECT \(unescaped: Self.bikeColumns) FROM bike WHERE id = \(id) AND ownerTokenHash = \(hash)
                    \(unescaped: lock ? "FOR UPDATE" : "")
                    """, logger: logger
                ).collect().first.map(Bike.init(row:))
            }
            guard let current = try await bike(lock: true) else { return .notOwner }
            guard let record else {
                guard current.email != nil else { return .unchanged(current) }
                try await connection.query(
                    "UPDATE bike SET \(unescaped: EmailSQL.clearColumns) WHERE id = \(id)", logger: logger)
                try await Self.abandonEmail(
                    bikeId: id, reason: "the address was removed", now: now, connection: connection, logger: logger)
                return try await bike().map(EmailChange.removed) ?? .notOwner
            }
            if current.email?.address == record.address && current.email?.state == .confirmed {
                return .unchanged(current)
            }
            let (forBike, forAddress) = try await Self.confirmationsSent(
                bikeId: id, addressHash: record.addressHash, now: now, connection: connection, logger: logger)
            guard forBike < limits.perBikePerDay else { return .bikeLimited }
            guard forAddress < limits.perAddressPerDay else { return .addressLimited }
            try await Self.abandonEmail(
                bikeId: id, reason: "the address was changed", now: now, connection: connection, logger: logger)
            try await Self.oweConfirmation(
                record, bikeId: id, limits: limits, now: now, connection: connection, logger: logger)
            return try await bike().map(EmailChange.confirmationOwed) ?? .notOwner
        }
    }

    /// The confirmations sent in the last day to the bike and to the address, across all bikes. The recipient's
    /// count is read under a lock of its own, so two servers cannot both send its last one.
    private static func confirmationsSent(
        bikeId id: String, addressHash: String, now: Date, connection: PostgresConnection, logger: Logger
    ) async throws -> (bike: Int, address: Int) {
        let at = seconds(now)
        try await connection.query("SELECT pg_advisory_xact_lock(hashtext(\(addressHash)))", logger: logger)
        try await connection.query(
            "DELETE FROM emailConfirmation WHERE sentAt <= \(at - EmailSQL.day)", logger: logger)
        let counts = try await connection.query(
            """
            SELECT (SELECT count(*) FROM emailConfirmation WHERE bikeId = \(id)),
                   (SELECT count(*) FROM emailConfirmation WHERE addressHash = \(addressHash))
            """, logger: logger
        ).collect()
        return try counts.first?.decode((Int, Int).self) ?? (0, 0)
    }

    /// The new address, unconfirmed, its confirmation counted and its message owed.
    private static func oweConfirmation(
        _ record: EmailChangeRecord, bikeId id: String, limits: EmailLimits, now: Date, connection: PostgresConnection,
        logger: Logger
    ) async throws {
        let at = seconds(now)
        let notice = record.notice(bikeId: id, limits: limits, now: now)
        try await connection.query(
            """
            UPDATE bike SET email = \(record.address), emailState = 'unconfirmed', emailFailure = NULL,
                emailUnsubscribeKey = \(record.unsubscribeKey), emailCodeHash = \(Secrets.hash(record.code)),
                emailCodeExpiresAt = \(seconds(notice.expiresAt))
            WHERE id = \(id)
            """, logger: logger)
        try await connection.query(
            """
            INSERT INTO emailConfirmation (bikeId, addressHash, sentAt) VALUES (\(id), \(record.addressHash), \(at))
            """, logger: logger)
        try await connection.query(
            """
            INSERT INTO notification (id, bikeId, visitId, type, channel, target, payload, createdAt, nextAttemptAt)
            VALUES (\(record.messageId), \(id), \(record.messageId), \(EmailConfirmationNotice.type), 'email',
                    \(record.address), \(notice.json()), \(at), \(at))
            ON CONFLICT DO NOTHING
            """, logger: logger)
    }

    public func confirmEmail(code: String, now: Date) async throws -> Bool {
        try await !rows(
            """
            UPDATE bike SET emailState = 'confirmed', emailCodeHash = NULL, emailCodeExpiresAt = NULL
            WHERE emailCodeHash = \(Secrets.hash(code)) AND emailCodeExpiresAt > \(Self.seconds(now))
                AND emailState = 'unconfirmed'
            RETURNING id
            """
        ).isEmpty
    }

    public func unsubscribeEmail(key: String, now: Date) async throws -> Bool {
        try await transaction { [logger] connection in
            guard
                let id = try await connection.query(
                    "SELECT id FROM bike WHERE emailUnsubscribeKey = \(key) FOR UPDATE", logger: logger
                ).collect().first?.decode(String.self)
            else { return false }
            try await connection.query(
                "UPDATE bike SET \(unescaped: EmailSQL.clearColumns) WHERE id = \(id)", logger: logger)
            try await Self.abandonEmail(
                bikeId: id, reason: "unsubscribed", now: now, connection: connection, logger: logger)
            return true
        }
    }

    public func emailCounts() async throws -> EmailCounts {
        let (confirmed, unconfirmed, failing) =
            try await rows("\(unescaped: EmailSQL.countsQuery)").first?.decode((Int, Int, Int).self) ?? (0, 0, 0)
        return EmailCounts(confirmed: confirmed, unconfirmed: unconfirmed, failing: failing)
    }

    public func bike(id: String) async throws -> Bike? {
        try await rows("SELECT \(unescaped: Self.bikeColumns) FROM bike WHERE id = \(id)").first.map(Bike.init(row:))
    }

    public func bike(unsubscribeKey: String) async throws -> Bike? {
        try await rows(
            "SELECT \(unescaped: Self.bikeColumns) FROM bike WHERE emailUnsubscribeKey = \(unsubscribeKey)"
        ).first.map(Bike.init(row:))
    }

    /// Every message still owed to the bike's address goes no further.
    static func abandonEmail(bikeId: String, reason: String, now: Date, connection: PostgresConnection, logger: Logger)
        async throws
    {
        try await connection.query(
            """
            UPDATE notification SET abandonedAt = \(seconds(now)), lastError = \(reason)
            WHERE bikeId = \(bikeId) AND channel = 'email' AND deliveredAt IS NULL AND abandonedAt IS NULL
            """, logger: logger)
    }
}
