extension RegistrySchema {
    static let v8OwnerEmail = Migration(identifier: "v8-owner-email") { dialect in
        [
            // The owner's address (issue 39) lives on the bike's row, so it is deleted with it. Only the hash of its
            // confirmation code is kept here; the unsubscribe key is in clear, since every message carries it.
            "ALTER TABLE bike ADD COLUMN email TEXT",
            "ALTER TABLE bike ADD COLUMN emailState TEXT",
            "ALTER TABLE bike ADD COLUMN emailFailure TEXT",
            "ALTER TABLE bike ADD COLUMN emailUnsubscribeKey TEXT",
            "ALTER TABLE bike ADD COLUMN emailCodeHash TEXT",
            "ALTER TABLE bike ADD COLUMN emailCodeExpiresAt DOUBLE PRECISION",
            "CREATE INDEX bike_email_code ON bike(emailCodeHash)",
            "CREATE INDEX bike_email_unsubscribe ON bike(emailUnsubscribeKey)",
            // Each confirmation sent, for the limits per bike and per recipient: the recipient by its hash, and
            // only for the day the limits look back over (each change of address deletes older rows).
            """
            CREATE TABLE emailConfirmation (
                id \(dialect.generatedKey),
                bikeId TEXT NOT NULL,
                addressHash TEXT NOT NULL,
                sentAt DOUBLE PRECISION NOT NULL
            )
            """,
            "CREATE INDEX emailConfirmation_address ON emailConfirmation(addressHash, sentAt)",
            "CREATE INDEX emailConfirmation_bike ON emailConfirmation(bikeId, sentAt)",
        ]
    }
}
