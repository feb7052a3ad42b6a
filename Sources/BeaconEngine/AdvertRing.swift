public import Synchronization

/// The fixed-capacity, lock-free hand-off from the capture thread (one producer) to the engine (one consumer).
///
/// The producer never waits: when the ring is full it overwrites the oldest entry, and the consumer counts
/// every entry it lost that way (`overwritten`). A café radio that outruns the engine should lose the oldest
/// adverts, not stall the socket read and lose the newest ones in the kernel.
///
/// Each slot is a small seqlock: a sequence word and the advert's four words, all atomics, so a slot the
/// producer rewrites while the consumer reads it is detected (the sequence changed) and skipped rather than
/// read torn, and there is no data race for the thread sanitizer to find. Nothing is allocated after `init`.
///
/// Each end is made once (`makeProducer()`, `makeConsumer()`) and is non-copyable, so each side has exactly
/// one owner.
public final class AdvertRing: @unchecked Sendable {
    public let capacity: Int
    @usableFromInline let mask: UInt64
    /// Per slot: sequence, then the advert's words. The sequence is 2i+1 while entry i is written, 2i+2 after.
    @usableFromInline let slots: UnsafeMutablePointer<Atomic<UInt64>>
    @usableFromInline static let wordsPerSlot = 5
    /// Entries ever pushed; written only by the producer.
    @usableFromInline let tail = Atomic<UInt64>(0)
    /// Entries consumed or lost; written only by the consumer, read by `status`.
    @usableFromInline let head = Atomic<UInt64>(0)
    @usableFromInline let lost = Atomic<UInt64>(0)
    private let producerMade = Atomic<Bool>(false)
    private let consumerMade = Atomic<Bool>(false)

    /// `capacity` is rounded up to a power of two (at least 2).
    public init(capacity: Int) {
        var size = 2
        while size < capacity { size <<= 1 }
        self.capacity = size
        self.mask = UInt64(size - 1)
        let words = size * Self.wordsPerSlot
        slots = .allocate(capacity: words)
        for index in 0..<words { (slots + index).initialize(to: Atomic(0)) }
    }

    deinit {
        slots.deinitialize(count: capacity * Self.wordsPerSlot)
        slots.deallocate()
    }

    /// The capture side. Traps if called twice: a second producer would break the ring's invariants.
    public func makeProducer() -> Producer {
        precondition(!producerMade.exchange(true, ordering: .relaxed), "AdvertRing.makeProducer() called twice")
        return Producer(ring: self)
    }

    /// The engine side. Traps if called twice: a second consumer would break the ring's invariants.
    public func makeConsumer() -> Consumer {
        precondition(!consumerMade.exchange(true, ordering: .relaxed), "AdvertRing.makeConsumer() called twice")
        return Consumer(ring: self)
    }

    /// Counters for `status`; safe to read from any thread.
    public var statistics: Statistics {
        Statistics(
            pushed: tail.load(ordering: .relaxed), consumed: head.load(ordering: .relaxed),
            overwritten: lost.load(ordering: .relaxed))
    }

    public struct Statistics: Hashable, Sendable {
        public var pushed: UInt64
        /// Entries the consumer has moved past: read, or lost to overwriting.
        public var consumed: UInt64
        public var overwritten: UInt64

        public init(pushed: UInt64, consumed: UInt64, overwritten: UInt64) {
            self.pushed = pushed
            self.consumed = consumed
            self.overwritten = overwritten
        }

        public var depth: UInt64 { pushed &- consumed }
    }

    @inlinable
    func slot(_ index: UInt64) -> UnsafeMutablePointer<Atomic<UInt64>> {
        slots + Int(index & mask) * Self.wordsPerSlot
    }

    /// The capture side.
    public struct Producer: ~Copyable, @unchecked Sendable {
        @usableFromInline let ring: AdvertRing
        @usableFromInline var next: UInt64 = 0

        init(ring: AdvertRing) { self.ring = ring }

        @inlinable
        public mutating func push(_ advert: BeaconAdvert) {
            let index = next
            let slot = ring.slot(index)
            let words = advert.words
            // Seqlock writer: mark the slot busy, fence so the data stores cannot move above the mark, write,
            // then publish with a release store that the consumer's acquire load pairs with.
            slot[0].store(index &* 2 &+ 1, ordering: .relaxed)
            atomicMemoryFence(ordering: .releasing)
            slot[1].store(words.0, ordering: .relaxed)
            slot[2].store(words.1, ordering: .relaxed)
            slot[3].store(words.2, ordering: .relaxed)
            slot[4].store(words.3, ordering: .relaxed)
            slot[0].store(index &* 2 &+ 2, ordering: .releasing)
            next = index &+ 1
            ring.tail.store(next, ordering: .releasing)
        }
    }

    /// The engine side.
    public struct Consumer: ~Copyable, @unchecked Sendable {
        @usableFromInline let ring: AdvertRing
        @usableFromInline var next: UInt64 = 0

        init(ring: AdvertRing) { self.ring = ring }

        /// The oldest entry still in the ring, or nil when it is empty.
        @inlinable
        public mutating func pop() -> BeaconAdvert? {
            let tail = ring.tail.load(ordering: .acquiring)
            let advert = take(before: tail)
            ring.head.store(next, ordering: .releasing)
            return advert
        }

        /// Hands every entry present now (at most `limit`) to `body`, oldest first; returns how many.
        @inlinable
        public mutating func drain(limit: Int = .max, _ body: (BeaconAdvert) throws -> Void) rethrows -> Int {
            let tail = ring.tail.load(ordering: .acquiring)
            var count = 0
            defer { ring.head.store(next, ordering: .releasing) }
            while count < limit, let advert = take(before: tail) {
                count += 1
                try body(advert)
            }
            return count
        }

        @inlinable
        mutating func take(before tail: UInt64) -> BeaconAdvert? {
            while next != tail {
                let capacity = UInt64(ring.capacity)
                if tail &- next > capacity {
                    // The producer has lapped us: everything older than the last `capacity` entries is gone.
                    skip(tail &- capacity &- next)
                    continue
                }
                let slot = ring.slot(next)
                let expected = next &* 2 &+ 2
                let before = slot[0].load(ordering: .acquiring)
                let words = (
                    slot[1].load(ordering: .relaxed), slot[2].load(ordering: .relaxed),
                    slot[3].load(ordering: .relaxed), slot[4].load(ordering: .relaxed)
                )
                atomicMemoryFence(ordering: .acquiring)
                let after = slot[0].load(ordering: .relaxed)
                guard before == expected, after == expected else {
                    // Rewritten for a newer entry while we were behind: this one is lost.
                    skip(1)
                    continue
                }
                next &+= 1
                return BeaconAdvert(words: words)
            }
            return nil
        }

        @inlinable
        mutating func skip(_ count: UInt64) {
            next &+= count
            ring.lost.add(count, ordering: .relaxed)
        }
    }
}
