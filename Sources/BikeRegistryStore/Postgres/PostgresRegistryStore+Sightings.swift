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
        _ items: [SightingBatches.Item], client: PostgresClient, deadline: Duration, logger: Logger
    ) async throws -> [RecordOutcome] {
        let posted = try items.map { try RecordSightings.Posted($0.sighting, station: $0.station, now: $0.now) }
        let statement = RecordSightings(
            posted: posted.sorted { $0.sighting.sightingId < $1.sighting.sightingId },
            received: seconds(items.map(\.now).max() ?? Date()))
        let rows = try await prepared(statement, client: client, deadline: deadline, logger: logger)
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

    public func sightings(bikeId: String, limit: Int) async throws -> [OwnerSighting] {
        let rows = try await rows(
            """
            SELECT sighting.kind, sighting.seenAt, sighting.firstSeen, sighting.lastSeen, station.name, station.latitude, station.longitude,
                   sighting.proximity, sighting.rssi, sighting.visitId, sighting.timesAsReceived
            FROM sighting JOIN station ON station.id = sighting.stationId
            WHERE bikeId = \(bikeId) ORDER BY seenAt DESC, receivedAt DESC, sighting.id DESC LIMIT \(limit)
            """)
        return try rows.map { row in
            let (kind, seenAt, firstSeen, lastSeen, name, latitude, longitude, proximity, rssi, visitId, asReceived) =
                try row.decode(
                    (String, Double, Double, Double, String, Double, Double, String, Double?, String, Bool).self)
            return OwnerSighting(
                kind: kind, seenAt: Self.date(seenAt), firstSeen: Self.date(firstSeen), lastSeen: Self.date(lastSeen),
                station: .init(name: name, latitude: latitude, longitude: longitude), proximity: proximity, rssi: rssi,
                visitId: visitId, timesAsReceived: asReceived)
        }
    }

    public func unverifiedSightings() async throws -> Int {
        try await rows("\(unescaped: RegistrySchema.unverifiedSightings)").first?.decode(Int.self) ?? 0
    }

    public func hasSighting(_ id: String) async throws -> Bool {
        try await !rows("SELECT 1 FROM sighting WHERE id = \(id.lowercased())").isEmpty
    }

    public func purge(before cutoff: Date) async throws -> Int {
        let cutoff = Self.seconds(cutoff)
        return try await transaction { [logger] connection in
            let deleted = try await connection.query(
                "DELETE FROM sighting WHERE receivedAt < \(cutoff) RETURNING 1", logger: logger
            ).collect()
            try await connection.query(
                "DELETE FROM notification WHERE coalesce(deliveredAt, abandonedAt) < \(cutoff)", logger: logger)
            return deleted.count
        }
    }
}
