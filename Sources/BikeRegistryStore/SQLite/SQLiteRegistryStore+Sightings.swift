public import BikeRegistryCore
public import Foundation

extension SQLiteRegistryStore {
    /// The sighting and the messages it owes, in one transaction on the file's one writer: the sighting's row, unless
    /// its id is stored already, then each message due on each of the bike's confirmed targets, if the bike owes it
    /// (`NotificationSQL`, the rule PostgreSQL's batch writes too).
    public func record(_ sent: SightingReport, from station: Station, now: Date) async throws -> RecordOutcome {
        let sighting = StationClockCheck.checked(sent, receivedAt: now)
        let visit = VisitNotifications(sighting: sighting, stationId: station.id)
        let due = try visit.candidates(by: sighting, station: station, now: now).filter(\.due)
        return try await database.transaction { connection in
            guard
                try await connection.exists(
                    """
                    INSERT INTO sighting (id, stationId, bikeId, kind, seenAt, firstSeen, lastSeen, proximity, rssi, count,
                                          visitId, receivedAt, timesAsReceived, verifiedRotating)
                    VALUES (\(sighting.sightingId), \(station.id), \(sighting.bikeId), \(sighting.kind.rawValue),
                            \(sighting.date), \(sighting.firstSeen), \(sighting.lastSeen), \(sighting.proximity),
                            \(sighting.rssi), \(sighting.count), \(visit.visitId), \(now), \(sighting.timesAsReceived),
                            \(sighting.verifiedRotating))
                    ON CONFLICT (id) DO NOTHING RETURNING id
                    """)
            else { return .repeated }
            var owed = 0
            for candidate in due {
                owed += try await connection.rows(
                    NotificationSQL.owe(
                        candidate, visitId: visit.visitId, bikeId: sighting.bikeId,
                        verified: sighting.verifiedRotating, now: now)
                ).count
            }
            return .recorded(notifications: owed)
        }
    }
}

extension SQLiteRegistryStore {
    /// A read: the file's one server takes messages one at a time from its worker, which leaves out those it is
    /// delivering by their targets, so a message cannot be taken twice and `heldUntil` has nothing to guard.
    public func takeDueNotification(now: Date, busyTargets: Set<String>, heldUntil: Date) async throws
        -> PendingNotification?
    {
        try await database.readRow(
            """
            SELECT \(NotificationRows.columns)
            FROM notification JOIN bike ON bike.id = notification.bikeId
            WHERE deliveredAt IS NULL AND abandonedAt IS NULL AND nextAttemptAt <= \(now)
                AND target NOT IN (\(Self.list(busyTargets)))
            ORDER BY nextAttemptAt, notification.createdAt LIMIT 1
            """
        ).map(NotificationRows.notification)
    }

    public func nextNotificationDue(busyTargets: Set<String>) async throws -> Date? {
        try await database.readRow(
            """
            SELECT min(nextAttemptAt) FROM notification WHERE deliveredAt IS NULL AND abandonedAt IS NULL
                AND target NOT IN (\(Self.list(busyTargets)))
            """
        )?.decode(0)
    }

    /// `?, ?, …`, a value each; none as a subquery with no rows (`x NOT IN (NULL)` would be NULL).
    private static func list(_ values: Set<String>) -> SQL {
        guard !values.isEmpty else { return "SELECT NULL WHERE 0" }
        return values.sorted().enumerated().reduce(into: "") { list, item in
            list = item.offset == 0 ? "\(item.element)" : "\(list), \(item.element)"
        }
    }
}
