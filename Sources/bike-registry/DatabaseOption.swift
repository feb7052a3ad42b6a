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
import ServiceLifecycle
import UnixSignals

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
                Unix socket (?host=DIRECTORY if not /var/run/postgresql). Several hosts, as libpq takes them: \
                postgres://USER@HOST1:PORT1,HOST2:PORT2/DATABASE?target_session_attrs=read-write (or primary, or any): \
                the one that takes writes, found again when it changes (a failover). The schema is created or brought \
                up to date at start.
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

    /// How long one PostgreSQL operation of an operator's command may take: `beacons issue` writes up to 65,536
    /// beacons in one transaction, which took PostgreSQL past a request's 5 s from 40,000 on. `serve` gives its
    /// requests `PostgresRegistryStore.standardDeadline`.
    static let commandDeadline = Duration.seconds(300)

    func open(
        connections: Int = 2, postgresDeadline: Duration = Self.commandDeadline, observer: (any StoreObserver)? = nil,
        logger: Logger = Logger(label: "bike-registry")
    ) async throws -> any RegistryStore {
        do {
            return try await RegistryStores.open(
                location, connections: connections, fileMode: Self.fileMode, postgresDeadline: postgresDeadline,
                observer: observer, logger: logger)
        } catch {
            // 73 (EX_CANTCREAT), as beacond says of a state directory it cannot use.
            FileHandle.standardError.write(Data("bike-registry: \(error)\n".utf8))
            throw ExitCode(73)
        }
    }

    /// A SQLite file's permissions: the service's own user and group under systemd (its StateDirectory=), so an
    /// operator's `station add` as that user shares them; the owner alone otherwise.
    static var fileMode: mode_t { ProcessInfo.processInfo.environment["STATE_DIRECTORY"] == nil ? 0o600 : 0o640 }

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
