import BikeRegistryCore
import Foundation
import NIOConcurrencyHelpers

/// What the server's parts report as it happens, for whoever waits on it: the missing list's version its copy in
/// memory holds (`RegistrySnapshot`), each delivery whose outcome is written (`NotificationWorker`), and the moment of
/// the registry's clock the reports were last swept as of (`ReportSweeper`). A test waits
/// for the event rather than polling for its effect; every wait has a bound, so a test that fails ends.
final class RegistryEvents: Sendable {
    private struct Waiting {
        var isMet: @Sendable (State) -> Bool
        var continuation: CheckedContinuation<Bool, Never>
    }

    struct State: Sendable {
        /// The newest list version the server's copy holds.
        var listVersion: Int64 = .min
        /// Deliveries whose outcome was written, by outcome.
        var delivered = 0
        var written = 0
        /// The registry's clock at the last sweep of the missing reports done, its lapses in the list.
        var sweptAt = Date.distantPast
    }

    private let state = NIOLockedValueBox<(now: State, waiting: [UUID: Waiting])>((State(), [:]))

    init() {}

    func listHeld(_ version: Int64) { change { $0.listVersion = max($0.listVersion, version) } }

    func attemptWritten(_ outcome: NotificationOutcome) {
        change { state in
            state.written += 1
            if outcome == .delivered { state.delivered += 1 }
        }
    }

    func swept(at moment: Date) { change { $0.sweptAt = max($0.sweptAt, moment) } }

    /// Whether the reports have been swept as of `moment` of the registry's clock, or later, within `timeout`: what
    /// was due by then has lapsed, and the list held says so.
    func swept(asOf moment: Date, within timeout: Duration = .seconds(30)) async -> Bool {
        await wait(within: timeout) { $0.sweptAt >= moment }
    }

    /// Whether the server's copy holds the list at `version` or later within `timeout`.
    func list(atLeast version: Int64, within timeout: Duration = .seconds(30)) async -> Bool {
        await wait(within: timeout) { $0.listVersion >= version }
    }

    /// Whether `count` deliveries have been written delivered within `timeout`.
    func delivered(_ count: Int, within timeout: Duration = .seconds(30)) async -> Bool {
        await wait(within: timeout) { $0.delivered >= count }
    }

    private func change(_ body: (inout State) -> Void) {
        let met = state.withLockedValue { state -> [CheckedContinuation<Bool, Never>] in
            body(&state.now)
            let now = state.now
            let met = state.waiting.filter { $0.value.isMet(now) }
            for id in met.keys { state.waiting[id] = nil }
            return met.values.map(\.continuation)
        }
        for continuation in met { continuation.resume(returning: true) }
    }

    /// Answered true when the state meets `isMet`, or false at `timeout`: whichever takes the waiter from the list
    /// (under the lock) answers it, so it is answered once.
    private func wait(within timeout: Duration, until isMet: @escaping @Sendable (State) -> Bool) async -> Bool {
        let id = UUID()
        return await withCheckedContinuation { continuation in
            let already = state.withLockedValue { state -> Bool in
                if isMet(state.now) { return true }
                state.waiting[id] = Waiting(isMet: isMet, continuation: continuation)
                return false
            }
            guard !already else { return continuation.resume(returning: true) }
            Task {
                try? await Task.sleep(for: timeout)
                self.state.withLockedValue { $0.waiting.removeValue(forKey: id) }?.continuation.resume(returning: false)
            }
        }
    }
}
