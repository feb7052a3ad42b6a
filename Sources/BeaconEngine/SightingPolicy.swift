/// When one visit of a beacon produces sightings: `enter` when a missing bike is first heard, at most one
/// `update` per report interval while it stays, `exit` when it leaves. Nothing for a bike that is not missing.
///
/// A pure state machine (the Hummingbird pattern): the engine feeds it events and sends what it returns.
/// Times are the engine's monotonic nanoseconds (`EngineTime`).
struct SightingPolicy: Sendable {
    enum State: Sendable {
        /// Heard, but not missing (yet): nothing reported.
        case quiet
        /// Reported: `enter` sent, then `updates` updates, the last report at `lastReport`.
        case reporting(lastReport: EngineTime, updates: Int)
        /// Reported, then the registry said the bike is no longer missing: nothing more, not even `exit`.
        /// Should it go missing again within the same visit, reporting resumes with an `update`.
        case withdrawn(updates: Int)
    }

    private(set) var state: State = .quiet

    /// A report is due. `sequence` numbers the event within the visit (0 for enter, n for the n-th update).
    struct Report: Equatable {
        var kind: SightingKind
        var sequence: Int
    }

    /// An advert was heard at `now`; `missing` is the bike's state in the current set.
    mutating func heard(missing: Bool, at now: EngineTime, reportInterval: EngineTime) -> Report? {
        switch state {
        case .quiet:
            guard missing else { return nil }
            state = .reporting(lastReport: now, updates: 0)
            return Report(kind: .enter, sequence: 0)
        case .reporting(let lastReport, let updates):
            guard missing else {
                state = .withdrawn(updates: updates)
                return nil
            }
            guard now - lastReport >= reportInterval else { return nil }
            state = .reporting(lastReport: now, updates: updates + 1)
            return Report(kind: .update, sequence: updates + 1)
        case .withdrawn(let updates):
            guard missing else { return nil }
            state = .reporting(lastReport: now, updates: updates + 1)
            return Report(kind: .update, sequence: updates + 1)
        }
    }

    /// The visit ended: an `exit` is due only if the visit was being reported.
    func left() -> Report? {
        if case .reporting(_, let updates) = state { return Report(kind: .exit, sequence: updates + 1) }
        return nil
    }
}
