extension RegistrySchema {
    static let v11NotificationTargets = Migration(
        identifier: "v11-notification-targets", statements: notificationTargets)

    /// Issue 51: a bike's targets, one row a channel, in a table of their own rather than columns of `bike`, so a
    /// channel is a name and not a migration. The webhook and ntfy URLs are moved confirmed; the address with its
    /// state, failure, keys and the expiry of its confirmation. Then the bike's columns go (SQLite drops a column
    /// only once nothing indexes it). A SQLite file's commit counts count a target's change as the owner's change
    /// it is (`CommitLedger`'s `bikeChanges`).
    private static func notificationTargets(_ dialect: Dialect) -> [String] {
        let moved = [
            "webhookURL", "ntfyURL", "email", "emailState", "emailFailure", "emailUnsubscribeKey", "emailCodeHash",
            "emailCodeExpiresAt",
        ]
        let counted =
            dialect == .sqlite
            ? ["INSERT", "UPDATE", "DELETE"].map { event in
                """
                CREATE TRIGGER count_notificationTarget_\(event.lowercased()) AFTER \(event) ON notificationTarget
                BEGIN UPDATE commitCount SET value = value + 1 WHERE name = 'bikeChanges'; END
                """
            } : []
        return [
            """
            CREATE TABLE notificationTarget (
                bikeId TEXT NOT NULL REFERENCES bike(id) ON DELETE CASCADE,
                channel TEXT NOT NULL,
                target TEXT NOT NULL,
                state TEXT NOT NULL,
                failure TEXT,
                unsubscribeKey TEXT,
                confirmationHash TEXT,
                confirmationExpiresAt DOUBLE PRECISION,
                PRIMARY KEY (bikeId, channel)
            )
            """,
            "CREATE INDEX notificationTarget_confirmation ON notificationTarget(confirmationHash)",
            "CREATE INDEX notificationTarget_unsubscribe ON notificationTarget(unsubscribeKey)",
            """
            INSERT INTO notificationTarget (bikeId, channel, target, state)
            SELECT id, 'webhook', webhookURL, 'confirmed' FROM bike WHERE webhookURL IS NOT NULL
            """,
            """
            INSERT INTO notificationTarget (bikeId, channel, target, state)
            SELECT id, 'ntfy', ntfyURL, 'confirmed' FROM bike WHERE ntfyURL IS NOT NULL
            """,
            """
            INSERT INTO notificationTarget (bikeId, channel, target, state, failure, unsubscribeKey, confirmationHash, confirmationExpiresAt)
            SELECT id, 'email', email, emailState, emailFailure, emailUnsubscribeKey, emailCodeHash, emailCodeExpiresAt
            FROM bike WHERE email IS NOT NULL AND emailState IS NOT NULL
            """,
            "DROP INDEX bike_email_code",
            "DROP INDEX bike_email_unsubscribe",
        ] + moved.map { "ALTER TABLE bike DROP COLUMN \($0)" } + counted
    }
}
