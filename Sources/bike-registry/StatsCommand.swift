import ArgumentParser
import BikeRegistryCore
import BikeRegistryStore
import Foundation

/// `bike-registry stats`: what the missing reports came to, and how many owners' addresses there are, for the
/// operator. Counts only: no bike, owner, address or report is named.
struct StatsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract:
            "The missing reports: made, open, lapsed, recovered, withdrawn, how soon bikes were sighted, and unverified sightings.",
        discussion: """
            The time to a first sighting is the median, over the reports whose bike a station heard while the report \
            was open, of the time from the report to that sighting; sightings are kept --retention-days. A sighting \
            of a rotating beacon's bike is unverified when the identity heard was not the beacon's within its window \
            (a clone, a replay, a beacon far off its clock) or the server had no --key-file: it is kept, and tells \
            its owner nothing.
            """)

    @Flag(help: "One JSON object.") var json = false
    @OptionGroup var database: DatabaseOption

    func run() async throws {
        let (stats, emails, unverified) = try await database.with { store in
            (
                try await store.reportStats(now: Date()), try await store.emailCounts(),
                try await store.unverifiedSightings()
            )
        }
        let median = stats.medianToFirstSighting
        if json {
            let fields: [String: Any] = [
                "reportsMade": stats.made, "open": stats.open, "lapsed": stats.lapsed, "recovered": stats.recovered,
                "withdrawn": stats.withdrawn,
                "medianSecondsToFirstSighting": median.map { Int($0.rounded()) } ?? NSNull(),
                "recoveredSighted": stats.recoveredSighted,
                "emailAddresses": [
                    "confirmed": emails.confirmed, "unconfirmed": emails.unconfirmed, "failing": emails.failing,
                ],
                "unverifiedSightings": unverified,
            ]
            try CommandOutput.printJSONLine(fields)
        } else {
            print(
                """
                missing reports made \(stats.made): open \(stats.open), lapsed \(stats.lapsed), recovered \(stats.recovered), withdrawn \(stats.withdrawn)
                median time from a report to its bike's first sighting: \(median.map(Self.readable) ?? "no report's bike has been sighted")
                recovered bikes that had been sighted: \(stats.recoveredSighted) of \(stats.recovered)
                owners' e-mail addresses: \(emails.confirmed) confirmed, \(emails.unconfirmed) not confirmed yet, \(emails.failing) failing
                unverified sightings of rotating beacons' bikes (told nobody): \(unverified)
                """)
        }
    }

    static func readable(_ seconds: TimeInterval) -> String {
        let whole = Int(seconds.rounded())
        if whole < 3_600 { return "\(whole / 60) min \(whole % 60) s" }
        if whole < 86_400 { return "\(whole / 3_600) h \(whole % 3_600 / 60) min" }
        return "\(whole / 86_400) d \(whole % 86_400 / 3_600) h"
    }
}
