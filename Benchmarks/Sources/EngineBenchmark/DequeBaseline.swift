import BeaconEngine
import DequeModule
import Synchronization

/// The baseline the advert ring is measured against: the obvious bounded queue, a Deque behind a mutex,
/// with the same policy (when full, drop the oldest and count it).
final class MutexDeque: Sendable {
    private struct State {
        var queue: Deque<BeaconAdvert>
        var dropped: UInt64 = 0
    }
    private let state: Mutex<State>
    private let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
        state = Mutex(State(queue: Deque(minimumCapacity: capacity)))
    }

    func push(_ advert: BeaconAdvert) {
        state.withLock { state in
            if state.queue.count == capacity {
                state.queue.removeFirst()
                state.dropped += 1
            }
            state.queue.append(advert)
        }
    }

    func pop() -> BeaconAdvert? {
        state.withLock { $0.queue.popFirst() }
    }

    /// Takes everything present under one lock, as a batch-minded consumer would.
    func drain(into buffer: inout [BeaconAdvert]) {
        state.withLock { state in
            buffer.append(contentsOf: state.queue)
            state.queue.removeAll(keepingCapacity: true)
        }
    }

    var dropped: UInt64 { state.withLock { $0.dropped } }
}
