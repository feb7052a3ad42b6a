import ArgumentParser
import BikeRegistryServer
import BikeRegistryStore
import Foundation
import Hummingbird
import Logging

@main
struct BikeRegistryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bike-registry",
        abstract: "The registry beacond stations report to: owners register bikes and mark them missing, stations fetch the missing list and post sightings, and owners are notified.",
        discussion: """
            The API is docs/registry-api.yaml. Data lives in one SQLite file: --database, or registry.sqlite in \
            $STATE_DIRECTORY (under systemd) or the working directory.
            """,
        subcommands: [Serve.self, StationCommand.self])
}

/// `--database`, shared by every command.
struct DatabaseOption: ParsableArguments {
    @Option(help: ArgumentHelp("The registry's SQLite file.", discussion: "Default: registry.sqlite in $STATE_DIRECTORY or the working directory."))
    var database: String?

    func open() throws -> RegistryDatabase {
        let path = database ?? ((ProcessInfo.processInfo.environment["STATE_DIRECTORY"].map { $0 + "/" } ?? "") + "registry.sqlite")
        if path.hasPrefix("postgres://") || path.hasPrefix("postgresql://") {
            throw ValidationError("PostgreSQL is not supported yet; give a SQLite file")
        }
        do {
            return try RegistryDatabase(path: path)
        } catch {
            // 73 (EX_CANTCREAT), as beacond says of a state directory it cannot use.
            FileHandle.standardError.write(Data("bike-registry: \(error)\n".utf8))
            throw ExitCode(73)
        }
    }
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Serve the station and owner API and deliver owners' notifications.")

    @Option(help: "HOST:PORT to listen on.") var listen = "127.0.0.1:8180"
    @OptionGroup var database: DatabaseOption
    @Flag(help: "Allow webhook and ntfy targets on loopback and private addresses (a café's own network, tests).")
    var allowPrivateWebhooks = false
    @Option(help: "Days sightings are kept.") var retentionDays = 90
    @Option(help: "Registrations one address may make per minute.") var registrationsPerMinute = 20
    @Option(help: "Requests one station key, or one owner token, may make per minute.") var requestsPerMinute = 600
    @Option(help: "trace, debug, info, notice, warning or error.") var logLevel = "info"

    func validate() throws {
        guard Self.split(listen) != nil else { throw ValidationError("--listen is HOST:PORT, for example 127.0.0.1:8180") }
        guard retentionDays >= 1 else { throw ValidationError("--retention-days is at least 1") }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("--log-level is trace, debug, info, notice, warning or error") }
    }

    static func split(_ address: String) -> (host: String, port: Int)? {
        guard let colon = address.lastIndex(of: ":"), let port = Int(address[address.index(after: colon)...]), (0...65535).contains(port) else { return nil }
        let host = String(address[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        return host.isEmpty ? nil : (host, port)
    }

    func run() async throws {
        LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
        var logger = Logger(label: "bike-registry")
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
        let database = try database.open()
        let (host, port) = Self.split(listen)!
        let configuration = RegistryServerConfiguration(
            host: host, port: port, allowPrivateWebhooks: allowPrivateWebhooks, retention: .seconds(retentionDays * 86_400),
            registrationsPerMinute: registrationsPerMinute, requestsPerMinute: requestsPerMinute)
        try await RegistryApplication.make(database: database, configuration: configuration, logger: logger).runService()
    }
}

struct StationCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "station", abstract: "Add, list and revoke the cafés' stations and their keys.", subcommands: [Add.self, List.self, Revoke.self])

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a station and print its key, once.",
            discussion: "Only a hash of the key is stored: keep it in the station's /etc/beacond/registry-api-key. A running server accepts it at once.")

        @Argument(help: "The café's name, as owners will read it.") var name: String
        // Unconditional: a value may start with "-" (south of the equator, west of Greenwich).
        @Option(parsing: .unconditional, help: "The café's latitude (negative south of the equator).") var latitude: Double
        @Option(parsing: .unconditional, help: "The café's longitude (negative west of Greenwich).") var longitude: Double
        @Flag(help: "Print {\"name\": …, \"key\": …} for scripts.") var json = false
        @OptionGroup var database: DatabaseOption

        func run() throws {
            let database = try database.open()
            let key: String
            do {
                key = try database.addStation(name: name, latitude: latitude, longitude: longitude)
            } catch {
                throw ValidationError("\(error)")
            }
            if json {
                let object = try JSONSerialization.data(withJSONObject: ["name": name, "key": key], options: [.sortedKeys])
                print(String(decoding: object, as: UTF8.self))
            } else {
                print("station \(name) added; its key (shown only now):\n\(key)")
            }
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the stations: position, last refresh, last sighting and beacond version.")

        @Flag(help: "One JSON object per station.") var json = false
        @OptionGroup var database: DatabaseOption

        func run() throws {
            let stations = try database.open().stations()
            for station in stations {
                let fields: [String: Any] = [
                    "name": station.name, "latitude": station.latitude, "longitude": station.longitude, "revoked": station.revokedAt != nil,
                    "lastRefresh": station.lastRefreshAt.map(Self.time) ?? NSNull(), "lastSighting": station.lastSightingAt.map(Self.time) ?? NSNull(),
                    "userAgent": station.userAgent ?? NSNull(),
                ]
                if json {
                    print(String(decoding: try JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys]), as: UTF8.self))
                } else {
                    let state = station.revokedAt == nil ? "" : "  REVOKED"
                    print(
                        "\(station.name)  (\(station.latitude), \(station.longitude))  last refresh \(station.lastRefreshAt.map(Self.time) ?? "never")"
                            + "  last sighting \(station.lastSightingAt.map(Self.time) ?? "never")  \(station.userAgent ?? "")\(state)")
                }
            }
            if stations.isEmpty && !json { print("no stations; add one with `bike-registry station add NAME --latitude … --longitude …`") }
        }

        static func time(_ date: Date) -> String { date.formatted(Date.ISO8601FormatStyle()) }
    }

    struct Revoke: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke a station's key; a running server refuses it at once. Its sightings are kept.")

        @Argument(help: "The station's name.") var name: String
        @OptionGroup var database: DatabaseOption

        func run() throws {
            guard try database.open().revokeStation(name: name) else { throw ValidationError("no station named \(name) (or it is revoked already)") }
            print("station \(name) revoked")
        }
    }
}
