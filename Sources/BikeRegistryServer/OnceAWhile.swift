import NIOConcurrencyHelpers

/// An answer worked out at most once per `interval` however many ask, and never by two at once: a caller in the
/// interval after an answer gets that answer, and one that comes while it is being worked out waits for the same.
/// What `/readyz` asks of the database and what a scrape reads from it, so that neither balancers nor scrapers
/// set the pace of the database's work.
final class OnceAWhile<Value: Sendable>: Sendable {
    private struct State {
        var last: (value: Value, at: ContinuousClock.Instant)?
        var working: Task<Value, Never>?
    }
    private let state = NIOLockedValueBox(State())
    private let interval: Duration

    init(interval: Duration) { self.interval = interval }

    func value(_ work: @escaping @Sendable () async -> Value) async -> Value {
        let now = ContinuousClock.now
        let found = state.withLockedValue { state -> Found in
            if let last = state.last, now - last.at < interval { return .answer(last.value) }
            if let working = state.working { return .working(working) }
            let working = Task { await work() }
            state.working = working
            return .working(working)
        }
        let working: Task<Value, Never>
        switch found {
        case .answer(let value): return value
        case .working(let task): working = task
        }
        let value = await working.value
        state.withLockedValue { state in
            if state.working == working {
                state.working = nil
                state.last = (value, ContinuousClock.now)
            }
        }
        return value
    }

    private enum Found {
        case answer(Value)
        case working(Task<Value, Never>)
    }
}
