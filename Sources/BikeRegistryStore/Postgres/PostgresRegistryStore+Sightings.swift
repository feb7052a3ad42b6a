public import BikeRegistryCore
public import Foundation
import Logging
import PostgresNIO

extension PostgresRegistryStore {
    /// Gathered with the sightings posted at the same moment into one statement (`SightingBatches`, `RecordSightings`).
    public func record(_ sighting: SightingReport, from station: Station, now: Date) async throws -> RecordOutcome {
        try await batches.record(
            .init(sighting: StationClockCheck.checked(sighting, receivedAt: now), station: station, now: now))
    }

    /// One batch: one statement, one round trip, one commit. The batch is written in sighting-id order, so two
    /// servers writing overlapping batches take the rows' locks in the same order; a deadlock PostgreSQL still
    /// finds (the messages' rows follow the plan's order) rolls the statement back whole, and it is run again
    /// (`prepared`). Each item's answer is found by its id, since the order written is not the order posted.
    static func write(
        _ items: [SightingBatches.Item], primary: PostgresPrimary, logger: Logger
    ) async throws -> [RecordOutcome] {
        let posted = try items.map { try RecordSightings.Posted($0.sighting, station: $0.station, now: $0.now) }
        let statement = RecordSightings(
            posted: posted.sorted { $0.sighting.sightingId < $1.sighting.sightingId },
            received: seconds(items.map(\.now).max() ?? Date()))
        let rows = try await prepared(statement, primary: primary, logger: logger)
        let outcomes = Dictionary(
            rows.map { id, inserted, owed in
                (id, inserted ? RecordOutcome.recorded(notifications: owed) : .repeated)
            }
        ) { first, _ in first }
        return try posted.map { posted in
            guard let outcome = outcomes[posted.sighting.sightingId] else {
                throw RegistryStoreError("the batch's answer had no row for a sighting")
            }
            return outcome
        }
    }
}
