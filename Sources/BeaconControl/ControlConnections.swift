import Logging
import NIOConcurrencyHelpers
import NIOCore

/// The connections being served, counted from the moment each is handed to swift-nio until it has closed, so
/// that the server takes no more than its limit at once, and closes those still open when it stops.
final class ControlConnections: Sendable {
    private struct State {
        var open: [Int: EventLoopFuture<any Channel>] = [:]
        var next = 0
    }

    private let state = NIOLockedValueBox(State())

    var count: Int { state.withLockedValue { $0.open.count } }

    func add(_ channel: EventLoopFuture<any Channel>, logger: Logger) {
        let key = state.withLockedValue { state in
            defer { state.next += 1 }
            state.open[state.next] = channel
            return state.next
        }
        let done: @Sendable () -> Void = { [self] in _ = state.withLockedValue { $0.open.removeValue(forKey: key) } }
        channel.whenComplete { result in
            switch result {
            case .success(let channel): channel.closeFuture.whenComplete { _ in done() }
            case .failure(let error):
                logger.error("control socket: cannot serve a connection", metadata: ["error": "\(error)"])
                done()
            }
        }
    }

    /// Closes every connection still open, and returns once each has closed.
    func closeAll() async {
        for channel in state.withLockedValue({ Array($0.open.values) }) {
            guard let channel = try? await channel.get() else { continue }
            try? await channel.close()
        }
    }
}
