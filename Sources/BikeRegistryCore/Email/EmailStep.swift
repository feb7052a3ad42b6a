/// What an owner's change of address does, decided the same way by both stores. Pure: the store reads the bike and,
/// when the step asks, the confirmations sent in the last day; asks here; and writes the step in the same
/// transaction.
package enum EmailStep: Equatable {
    /// Nothing to write: the answer is the bike as it is.
    case unchanged
    /// The address is removed, and whatever was still owed to it abandoned.
    case remove
    /// The confirmations sent in the last day to the bike and to the address decide (`limited`).
    case countConfirmations
    /// The new address, unconfirmed; what the old one was owed abandoned, and its confirmation owed.
    case confirm

    /// The first step for a change of `current`'s address to `address` (nil removes it).
    package static func first(current: Bike, to address: String?) -> EmailStep {
        guard let address else { return current.email == nil ? .unchanged : .remove }
        if current.email?.address == address && current.email?.state == .confirmed { return .unchanged }
        return .countConfirmations
    }

    /// After counting: the refusal, when a limit is reached, or `.confirm`.
    package static func limited(sentToBike: Int, sentToAddress: Int, limits: EmailLimits) -> Result<
        EmailStep, EmailRefusal
    > {
        guard sentToBike < limits.perBikePerDay else { return .failure(.bikeLimited) }
        guard sentToAddress < limits.perAddressPerDay else { return .failure(.addressLimited) }
        return .success(.confirm)
    }
}

/// Why a change of address was refused: a day's confirmations to the bike, or to the address, are used up.
package enum EmailRefusal: Error, Equatable {
    case bikeLimited
    case addressLimited

    package var change: EmailChange {
        switch self {
        case .bikeLimited: .bikeLimited
        case .addressLimited: .addressLimited
        }
    }
}
