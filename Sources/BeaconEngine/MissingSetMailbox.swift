import LockedValue
import Synchronization

/// Hands a new missing-bike set from the registry task to the engine without ever blocking the engine.
///
/// The writer swaps the set under a mutex and bumps a generation counter. The engine polls the counter (one
/// relaxed atomic load per batch) and, when it moved, takes the set only if the lock is free at that instant;
/// if the writer happens to hold it, the engine carries on with the set it has and looks again next batch.
public final class MissingSetMailbox: Sendable {
    private let current: LockedValue<MissingBikeSet>
    private let generation = Atomic<UInt64>(0)

    public init(_ initial: MissingBikeSet) {
        current = LockedValue(initial)
    }

    /// Replaces the set; the engine picks it up on its next poll.
    public func publish(_ set: MissingBikeSet) {
        current.withLock { value in
            value = set
            generation.add(1, ordering: .releasing)
        }
    }

    /// The set now in the mailbox (for status and the registry side; may wait for a publish in progress).
    public var latest: MissingBikeSet { current.withLock { $0 } }

    /// For the engine: the newer set and its generation when one was published since `seen`, else nil.
    /// Never waits.
    public func poll(since seen: UInt64) -> (set: MissingBikeSet, generation: UInt64)? {
        guard generation.load(ordering: .acquiring) != seen else { return nil }
        return current.withLockIfAvailable { value in (value, generation.load(ordering: .relaxed)) }
    }
}
