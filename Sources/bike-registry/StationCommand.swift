import ArgumentParser
import BeaconPOSIX
import BikeRegistryCore
import BikeRegistryMail
import BikeRegistryServer
import BikeRegistryStore
import DaemonSupport
import Foundation
import Hummingbird
import Logging

struct StationCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "station", abstract: "Add, list and revoke the cafés' stations and their keys.",
        subcommands: [Add.self, Import.self, List.self, Revoke.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a station and print its key, once.",
            discussion:
                "Only a hash of the key is stored: keep it in the station's /etc/beacond/registry-api-key. A running server accepts it at once."
        )

        @Argument(help: "The café's name, as owners will read it.") var name: String
        // Unconditional: a value may start with "-" (south of the equator, west of Greenwich).
        @Option(parsing: .unconditional, help: "The café's latitude (negative south of the equator).") var latitude:
            Double
        @Option(parsing: .unconditional, help: "The café's longitude (negative west of Greenwich).") var longitude:
            Double
        @Flag(help: "Print {\"name\": …, \"key\": …} for scripts.") var json = false
        @OptionGroup var database: DatabaseOption

        func run() async throws {
            let key: String
            do {
                key = try await database.with {
                    try await $0.addStation(name: name, latitude: latitude, longitude: longitude)
                }
            } catch let error as RegistryStoreError {
                throw ValidationError("\(error)")
            }
            if json {
                try CommandOutput.printJSONLine(["name": name, "key": key])
            } else {
                print("station \(name) added; its key (shown only now):\n\(key)")
            }
        }
    }

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add many stations at once and print their keys, once.",
            discussion: """
                FILE (or - for standard input) holds one station per line as JSON: {"name": …, "latitude": …, "longitude": …}. \
                Each line's key is printed as {"name": …, "key": …}, in order. A line that cannot be added stops the import \
                with its number and the reason; the stations before it are added, and their keys printed.
                """)

        @Argument(help: "The stations, one JSON object per line; - for standard input.") var file: String
        @OptionGroup var database: DatabaseOption

        struct Line: Decodable {
            var name: String
            var latitude: Double
            var longitude: Double
        }

        func run() async throws {
            let text = try CommandOutput.readInput(file)
            try await database.with { store in
                for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
                where !line.allSatisfy(\.isWhitespace) {
                    let station: Line
                    do {
                        station = try JSONDecoder().decode(Line.self, from: Data(line.utf8))
                    } catch {
                        throw ValidationError(
                            "\(file): line \(number + 1): not {\"name\", \"latitude\", \"longitude\"}")
                    }
                    let key: String
                    do {
                        key = try await store.addStation(
                            name: station.name, latitude: station.latitude, longitude: station.longitude)
                    } catch let error as RegistryStoreError {
                        throw ValidationError("\(file): line \(number + 1): \(error)")
                    }
                    try CommandOutput.printJSONLine(["name": station.name, "key": key])
                }
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the stations: position, last refresh, last sighting and beacond version.")

        @Flag(help: "One JSON object per station.") var json = false
        @OptionGroup var database: DatabaseOption

        func run() async throws {
            let stations = try await database.with { try await $0.stations() }
            for station in stations {
                let fields: [String: Any] = [
                    "name": station.name, "latitude": station.latitude, "longitude": station.longitude,
                    "revoked": station.revokedAt != nil,
                    "lastRefresh": station.lastRefreshAt.map(Self.time) ?? NSNull(),
                    "lastSighting": station.lastSightingAt.map(Self.time) ?? NSNull(),
                    "userAgent": station.userAgent ?? NSNull(),
                ]
                if json {
                    try CommandOutput.printJSONLine(fields)
                } else {
                    let state = station.revokedAt == nil ? "" : "  REVOKED"
                    print(
                        "\(station.name)  (\(station.latitude), \(station.longitude))  last refresh \(station.lastRefreshAt.map(Self.time) ?? "never")"
                            + "  last sighting \(station.lastSightingAt.map(Self.time) ?? "never")  \(station.userAgent ?? "")\(state)"
                    )
                }
            }
            if stations.isEmpty && !json {
                print("no stations; add one with `bike-registry station add NAME --latitude … --longitude …`")
            }
        }

        static func time(_ date: Date) -> String { ISOTime.format(date) }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Revoke a station's key; a running server refuses it at once. Its sightings are kept.")

        @Argument(help: "The station's name.") var name: String
        @OptionGroup var database: DatabaseOption

        func run() async throws {
            guard try await database.with({ try await $0.revokeStation(name: name) }) else {
                throw ValidationError("no station named \(name) (or it is revoked already)")
            }
            print("station \(name) revoked")
        }
    }
}
