import BikeRegistryCore
import Foundation

extension SQLRegistryStore {
    public func changeEmail(id: String, ownerToken: String, to address: String?, limits: EmailLimits, now: Date)
        async throws -> EmailChange
    {
        let hash = Secrets.hash(ownerToken)
        let record = address.map(EmailChangeRecord.init(address:))
        return try await database.transaction { connection in
            let owned: SQL = "b.id = \(id) AND b.ownerTokenHash = \(hash)"
            guard let current = try await connection.bike(where: owned, lock: true) else { return .notOwner }
            switch EmailStep.first(current: current, to: record?.address) {
            case .unchanged, .confirm:
                return .unchanged(current)
            case .remove:
                try await connection.execute(TargetSQL.save(.email, nil, bikeId: id))
                try await connection.execute(EmailSQL.abandon(bikeId: id, reason: "the address was removed", now: now))
                return try await connection.bike(where: owned).map(EmailChange.removed) ?? .notOwner
            case .countConfirmations:
                guard let record else { return .unchanged(current) }
                let (toBike, toAddress) = try await EmailSQL.confirmationsSent(
                    bikeId: id, addressHash: record.addressHash, now: now, connection)
                switch EmailStep.limited(sentToBike: toBike, sentToAddress: toAddress, limits: limits) {
                case .failure(let refusal): return refusal.change
                case .success:
                    try await connection.execute(
                        EmailSQL.abandon(bikeId: id, reason: "the address was changed", now: now))
                    for statement in EmailSQL.oweConfirmation(record, bikeId: id, limits: limits, now: now) {
                        try await connection.execute(statement)
                    }
                    return try await connection.bike(where: owned).map(EmailChange.confirmationOwed) ?? .notOwner
                }
            }
        }
    }

    public func confirmEmail(code: String, now: Date) async throws -> Bool {
        try await !database.write(
            """
            UPDATE notificationTarget SET state = 'confirmed', confirmationHash = NULL, confirmationExpiresAt = NULL
            WHERE confirmationHash = \(Secrets.hash(code)) AND confirmationExpiresAt > \(now)
                AND state = 'unconfirmed' AND channel = \(NotificationChannel.email.rawValue)
            RETURNING bikeId
            """
        ).isEmpty
    }

    public func unsubscribeEmail(key: String, now: Date) async throws -> Bool {
        try await database.transaction { connection in
            guard
                let id: String = try await connection.row(
                    """
                    DELETE FROM notificationTarget
                    WHERE unsubscribeKey = \(key) AND channel = \(NotificationChannel.email.rawValue) RETURNING bikeId
                    """
                )?.decode(0)
            else { return false }
            try await connection.execute(EmailSQL.abandon(bikeId: id, reason: "unsubscribed", now: now))
            return true
        }
    }

    public func emailCounts() async throws -> EmailCounts {
        guard
            let row = try await database.readRow(
                """
                SELECT count(*) FILTER (WHERE state = 'confirmed'), count(*) FILTER (WHERE state = 'unconfirmed'),
                       count(*) FILTER (WHERE state = 'failing')
                FROM notificationTarget WHERE channel = \(NotificationChannel.email.rawValue)
                """)
        else { return EmailCounts(confirmed: 0, unconfirmed: 0, failing: 0) }
        return EmailCounts(confirmed: try row.decode(0), unconfirmed: try row.decode(1), failing: try row.decode(2))
    }
}

/// The owner's e-mail's statements.
enum EmailSQL {
    /// The confirmations sent more than a day ago, which no limit looks at any more.
    static let day: TimeInterval = 86_400

    /// Every message still owed to the bike's address goes no further.
    static func abandon(bikeId: String, reason: String, now: Date) -> SQL {
        RegistrySQL.abandonOwed(bikeId: bikeId, channel: .email, reason: reason, now: now)
    }

    /// The confirmations sent in the last day to the bike and to the address, across all bikes. On PostgreSQL the
    /// recipient's count is read under a lock of its own, so two servers cannot both send its last one.
    static func confirmationsSent(bikeId id: String, addressHash: String, now: Date, _ connection: any SQLConnection)
        async throws -> (bike: Int, address: Int)
    {
        try await connection.execute(.postgresOnly("SELECT pg_advisory_xact_lock(hashtext(\(addressHash)))"))
        try await connection.execute("DELETE FROM emailConfirmation WHERE sentAt <= \(now.addingTimeInterval(-day))")
        guard
            let counts = try await connection.row(
                """
                SELECT (SELECT count(*) FROM emailConfirmation WHERE bikeId = \(id)),
                       (SELECT count(*) FROM emailConfirmation WHERE addressHash = \(addressHash))
                """)
        else { return (0, 0) }
        return (try counts.decode(0), try counts.decode(1))
    }

    /// The new address, unconfirmed, its confirmation counted and its message owed.
    static func oweConfirmation(_ record: EmailChangeRecord, bikeId id: String, limits: EmailLimits, now: Date)
        -> [SQL]
    {
        let notice = record.notice(bikeId: id, limits: limits, now: now)
        return [
            TargetSQL.upsert(
                bikeId: id, channel: .email, address: record.address, state: .unconfirmed,
                unsubscribeKey: record.unsubscribeKey, confirmationHash: Secrets.hash(record.code),
                confirmationExpiresAt: notice.expiresAt),
            "INSERT INTO emailConfirmation (bikeId, addressHash, sentAt) VALUES (\(id), \(record.addressHash), \(now))",
            """
            \(NotificationSQL.insert)
            VALUES (\(record.messageId), \(id), \(record.messageId), \(EmailConfirmationNotice.type),
                    \(NotificationChannel.email.rawValue), \(record.address), \(notice.json()), \(now), \(now))
            ON CONFLICT DO NOTHING
            """,
        ]
    }
}
