import ArgumentParser
import BikeRegistryServer
import BikeRegistryStore
import DaemonSupport
import Foundation
import Hummingbird
import Logging

@main
struct BikeRegistryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bike-registry",
        abstract:
            "The registry beacond stations report to: owners register bikes and mark them missing, stations fetch the missing list and post sightings, and owners are notified.",
        discussion: """
            The API is docs/registry-api.yaml. Data lives in one SQLite file (--database PATH, or registry.sqlite in \
            $STATE_DIRECTORY under systemd, else the working directory), or in a PostgreSQL database \
            (--database postgres://…) that several servers may share.
            """,
        version: ReleaseVersion.current,
        subcommands: [Serve.self, StationCommand.self])
}

/// `--database`, shared by every command.
struct DatabaseOption: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The registry's SQLite file, or a postgres:// URL.",
            discussion: """
                Default: $BIKE_REGISTRY_DATABASE, else registry.sqlite in $STATE_DIRECTORY or the working directory. A URL \
                with a password belongs in that variable (systemd: EnvironmentFile= of a root-only file), not on the \
                command line, which every local user can read. PostgreSQL: \
                postgres://USER:PASSWORD@HOST:PORT/DATABASE?sslmode=disable|prefer|require|verify-full (verify-full checks the \
                server's certificate, against sslrootcert=FILE if given), or postgres:///DATABASE for the local server's \
                Unix socket (?host=DIRECTORY if not /var/run/postgresql). The schema is created or brought up to date at start.
                """))
    var database: String?

    func validate() throws {
        do {
            try RegistryStores.check(location)
        } catch {
            throw ValidationError("--database: \(error)")
        }
    }

    var location: String {
        let environment = ProcessInfo.processInfo.environment
        return database ?? environment["BIKE_REGISTRY_DATABASE"].flatMap { $0.isEmpty ? nil : $0 }
            ?? ((environment["STATE_DIRECTORY"].map { $0 + "/" } ?? "") + "registry.sqlite")
    }

    func open(connections: Int = 2, logger: Logger = Logger(label: "bike-registry")) async throws -> any RegistryStore {
        do {
            return try await RegistryStores.open(location, connections: connections, logger: logger)
        } catch {
            // 73 (EX_CANTCREAT), as beacond says of a state directory it cannot use.
            FileHandle.standardError.write(Data("bike-registry: \(error)\n".utf8))
            throw ExitCode(73)
        }
    }

    /// Runs `body` with the store open, and closes it after.
    func with<Result>(_ body: (any RegistryStore) async throws -> Result) async throws -> Result {
        let store = try await open()
        do {
            let result = try await body(store)
            await store.close()
            return result
        } catch {
            await store.close()
            throw error
        }
    }
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the station and owner API and deliver owners' notifications.")

    @Option(help: "HOST:PORT to listen on.") var listen = "127.0.0.1:8180"
    @OptionGroup var database: DatabaseOption
    @Flag(help: "Allow webhook and ntfy targets on loopback and private addresses (a café's own network, tests).")
    var allowPrivateWebhooks = false
    @Option(help: "Days sightings are kept.") var retentionDays = 90
    @Option(help: "Registrations one address may make per minute.") var registrationsPerMinute = 20
    @Option(help: "Requests one station key, or one owner token, may make per minute.") var requestsPerMinute = 600
    @Option(help: "trace, debug, info, notice, warning or error.") var logLevel = "info"
    @Option(
        help: ArgumentHelp(
            "Connections to PostgreSQL at most (readers of a SQLite file).",
            discussion:
                "Each server of a shared database takes up to this many of the PostgreSQL server's max_connections (100 by default)."
        ))
    var databaseConnections = 16

    func validate() throws {
        guard Self.split(listen) != nil else {
            throw ValidationError("--listen is HOST:PORT, for example 127.0.0.1:8180")
        }
        guard retentionDays >= 1 else { throw ValidationError("--retention-days is at least 1") }
        guard (2...1000).contains(databaseConnections) else {
            throw ValidationError("--database-connections is 2 to 1000")
        }
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("--log-level is trace, debug, info, notice, warning or error")
        }
    }

    static func split(_ address: String) -> (host: String, port: Int)? {
        guard let colon = address.lastIndex(of: ":"), let port = Int(address[address.index(after: colon)...]),
            (0...65535).contains(port)
        else { return nil }
        let host = String(address[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        return host.isEmpty ? nil : (host, port)
    }

    func run() async throws {
        LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
        var logger = Logger(label: "bike-registry")
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
        let database = try await database.open(connections: databaseConnections, logger: logger)
        let (host, port) = Self.split(listen)!
        let configuration = RegistryServerConfiguration(
            host: host, port: port, allowPrivateWebhooks: allowPrivateWebhooks,
            retention: .seconds(retentionDays * 86_400),
            registrationsPerMinute: registrationsPerMinute, requestsPerMinute: requestsPerMinute)
        do {
            try await RegistryApplication.make(database: database, configuration: configuration, logger: logger)
                .runService()
        } catch {
            await database.close()
            throw error
        }
        await database.close()
    }
}

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
                let object = try JSONSerialization.data(
                    withJSONObject: ["name": name, "key": key], options: [.sortedKeys])
                print(String(decoding: object, as: UTF8.self))
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
            let text: String
            do {
                text =
                    file == "-"
                    ? String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
                    : try String(contentsOfFile: file, encoding: .utf8)
            } catch {
                throw ValidationError("cannot read \(file): \(error.localizedDescription)")
            }
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
                    let object = try JSONSerialization.data(
                        withJSONObject: ["name": station.name, "key": key], options: [.sortedKeys])
                    print(String(decoding: object, as: UTF8.self))
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
                    print(
                        String(
                            decoding: try JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys]),
                            as: UTF8.self))
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
