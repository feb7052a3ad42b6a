import BikeRegistryCore
import Foundation

extension RegistrySchema {
    static let v3StationClock = Migration(identifier: "v3-station-clock") { _ in
        [
            // A sighting whose station's clock was not believed is stored with the time it was received
            // (StationClockCheck), and marked so the owner is told.
            "ALTER TABLE sighting ADD COLUMN timesAsReceived BOOLEAN NOT NULL DEFAULT FALSE",
            // Sightings stored before that rule with such times (a year 0000 one took every reader of it down)
            // are given the same treatment.
            """
            UPDATE sighting SET seenAt = receivedAt, firstSeen = receivedAt, lastSeen = receivedAt, timesAsReceived = TRUE
            WHERE seenAt < \(earliest) OR firstSeen < \(earliest) OR lastSeen < \(earliest)
               OR seenAt > receivedAt + \(ahead) OR firstSeen > receivedAt + \(ahead) OR lastSeen > receivedAt + \(ahead)
            """,
        ]
    }

    private static let earliest = Int(StationClockCheck.earliest.timeIntervalSince1970)
    private static let ahead = Int(StationClockCheck.aheadAllowed)
}
