import ArgumentParser
import BikeRegistryCore
import BikeRegistryStore
import Foundation

/// `bike-registry abuse`: finders' reports of a beacon placed on them without their consent. Each paused its bike's
/// messages; the operator ends it by restoring them or removing the bike.
struct AbuseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "abuse",
        abstract: "List finders' reports of beacons placed on them, and resolve them.",
        discussion: """
            A report pauses its bike's messages at once (its sightings are still stored). Look at the report (the \
            finder's message, the bike's reports and sightings), then `abuse resolve ID --restore` if the bike's \
            owner is in the right, or `--remove` to delete the bike and revoke its beacon. The finder's address is not \
            kept.
            """,
        subcommands: [List.self, Resolve.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the reports, newest first.")

        @Flag(help: "One JSON object per report.") var json = false
        @Flag(help: "Only the reports not yet resolved.") var open = false
        @OptionGroup var database: DatabaseOption

        func run() async throws {
            let reports = try await database.with { try await $0.abuseReports() }.filter {
                !open || $0.resolvedAt == nil
            }
            for report in reports {
                let state = report.resolution?.rawValue ?? "open"
                if json {
                    let fields: [String: Any] = [
                        "id": report.id, "bikeId": report.bikeId,
                        "beacon": "\(report.uuid):\(report.major):\(report.minor)",
                        "message": report.message ?? NSNull(), "madeAt": ISOTime.format(report.madeAt), "state": state,
                        "resolvedAt": report.resolvedAt.map(ISOTime.format) ?? NSNull(),
                    ]
                    try CommandOutput.printJSONLine(fields)
                } else {
                    print(
                        "\(report.id)  \(state)  \(ISOTime.format(report.madeAt))  bike \(report.bikeId)  beacon \(report.uuid):\(report.major):\(report.minor)"
                    )
                    if let message = report.message {
                        print("    " + message.replacingOccurrences(of: "\n", with: "\n    "))
                    }
                }
            }
            if reports.isEmpty && !json { print(open ? "no open reports" : "no reports") }
        }
    }

    struct Resolve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "End a report, and every other open one of its bike: --restore or --remove.")

        @Argument(help: "The report's id (abuse_…).") var id: String
        @Flag(help: "The owner is in the right: the bike's messages resume.") var restore = false
        @Flag(help: "Delete the bike (its sightings and reports' details) and revoke its beacon.") var remove = false
        @OptionGroup var database: DatabaseOption

        func validate() throws {
            guard restore != remove else { throw ValidationError("give one of --restore and --remove") }
        }

        func run() async throws {
            let resolution: AbuseReport.Resolution = restore ? .restored : .removed
            let done = try await database.with { try await $0.resolveAbuse(id: id, resolution, now: Date()) }
            guard done else { throw ValidationError("no open report \(id)") }
            print(restore ? "\(id): the bike's messages resume" : "\(id): the bike is deleted and its beacon revoked")
        }
    }
}
