import BikeRegistryCore
import Foundation
import NIOConcurrencyHelpers

/// Sightings posted at the same moment, written together: while `inFlight` batches are being written, the sightings
/// that arrive wait and go as the next batch, one statement and one commit for all of them. A sighting posted alone
/// is written at once (no timer, no added wait); under load, the database's per-statement and per-commit costs are
/// shared. Each caller is answered when its own batch has committed, or failed: a batch is one statement, atomic.
final class SightingBatches: Sendable {
    struct Item: Sendable {
        var sighting: SightingReport
        var station: Station
        var now: Date
    }

    private struct Waiting {
        var item: Item
        var continuation: CheckedContinuation<RecordOutcome, any Error>
    }

    private struct State {
        var waiting: [Waiting] = []
        var writing = 0
    }

    private let state = NIOLockedValueBox(State())
    private let inFlight: Int
    private let largest: Int
    private let write: @Sendable ([Item]) async throws -> [RecordOutcome]

    /// - Parameter write: writes the batch in one statement, answering an outcome for each item in order.
    init(inFlight: Int = 2, largest: Int = 128, write: @escaping @Sendable ([Item]) async throws -> [RecordOutcome]) {
        self.inFlight = inFlight
        self.largest = largest
        self.write = write
    }

    func record(_ item: Item) async throws -> RecordOutcome {
        try await withCheckedThrowingContinuation { continuation in
            let start = state.withLockedValue { state -> Bool in
                state.waiting.append(Waiting(item: item, continuation: continuation))
                guard state.writing < inFlight else { return false }
                state.writing += 1
                return true
            }
            if start { Task { await self.drain() } }
        }
    }

    /// Writes batches until none is waiting.
    private func drain() async {
        while true {
            let batch = state.withLockedValue { state -> [Waiting] in
                let batch = Array(state.waiting.prefix(largest))
                state.waiting.removeFirst(batch.count)
                if batch.isEmpty { state.writing -= 1 }
                return batch
            }
            guard !batch.isEmpty else { return }
            do {
                let outcomes = try await write(batch.map(\.item))
                for (waiting, outcome) in zip(batch, outcomes) { waiting.continuation.resume(returning: outcome) }
                if outcomes.count < batch.count {
                    for waiting in batch[outcomes.count...] {
                        waiting.continuation.resume(
                            throwing: RegistryStoreError("the batch's answer had no row for it"))
                    }
                }
            } catch {
                for waiting in batch { waiting.continuation.resume(throwing: error) }
            }
        }
    }
}
