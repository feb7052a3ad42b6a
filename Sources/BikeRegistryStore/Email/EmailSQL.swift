import BikeRegistryCore

/// The statements of the owner's e-mail that both stores run as they are (no values but the bike's id, as the
/// dialect's first parameter).
enum EmailSQL {
    /// Forgets the address and everything about it.
    static let clearColumns = """
        email = NULL, emailState = NULL, emailFailure = NULL, emailUnsubscribeKey = NULL, emailCodeHash = NULL,
        emailCodeExpiresAt = NULL
        """

    /// The confirmations sent more than a day ago, which no limit looks at any more.
    static let day: Double = 86_400

    static let countsQuery = """
        SELECT count(*) FILTER (WHERE emailState = 'confirmed'), count(*) FILTER (WHERE emailState = 'unconfirmed'),
               count(*) FILTER (WHERE emailState = 'failing')
        FROM bike
        """
}
