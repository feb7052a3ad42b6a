import BikeRegistryCore
import Foundation
import NIOSSL
import PostgresNIO

/// A `postgres://` URL read as libpq reads one: `postgres://USER:PASSWORD@HOST:PORT/DATABASE?sslmode=…&host=…&port=…`.
/// No host (`postgres:///registry`) or `?host=/a/directory` means the server's Unix socket in that directory
/// (`/var/run/postgresql` by default), where a local server usually lets its own user in by peer authentication;
/// no user means the user running this. `sslmode` is `disable`, `prefer` (the default), `require` (encrypted, the
/// certificate not checked, as libpq does) or `verify-full` (checked against the system's authorities, or
/// `sslrootcert=FILE`, and the host's name).
///
/// Several hosts may be named, as libpq takes them (`postgres://USER@HOST1:PORT1,HOST2:PORT2/DB`), with
/// `target_session_attrs` saying which will do (`TargetSessionAttributes`); `PostgresPrimary` finds it among them.
struct PostgresLocation: Sendable, CustomStringConvertible {
    enum Endpoint: Sendable, Equatable {
        case tcp(host: String, port: Int)
        case socket(path: String)
    }

    enum SSLMode: String, Sendable {
        case disable, prefer, require
        case verifyFull = "verify-full"
    }

    /// Every host the URL names, in its order (one Unix socket when it names none).
    var endpoints: [Endpoint]
    /// The first of them: the only one, for a URL of one host.
    var endpoint: Endpoint { endpoints[0] }
    var sessions: TargetSessionAttributes
    var username: String
    var password: String?
    var database: String
    var sslMode: SSLMode
    var rootCertificate: String?

    static func isPostgres(_ location: String) -> Bool {
        location.hasPrefix("postgres://") || location.hasPrefix("postgresql://")
    }

    init(_ text: String) throws(RegistryStoreError) {
        guard Self.isPostgres(text) else {
            throw RegistryStoreError("not a postgres:// URL (postgres://USER:PASSWORD@HOST:PORT/DATABASE)")
        }
        let list = try PostgresHostList(text)
        guard let url = URLComponents(string: list.single) else {
            throw RegistryStoreError("not a postgres:// URL (postgres://USER:PASSWORD@HOST:PORT/DATABASE)")
        }
        let query = Dictionary(
            (url.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { _, last in last })
        let known: Set<String> = ["sslmode", "sslrootcert", "host", "port", "target_session_attrs"]
        if let unknown = query.keys.sorted().first(where: { !known.contains($0) }) {
            throw RegistryStoreError(
                "the PostgreSQL URL's \(unknown)= is not understood (sslmode, sslrootcert, host, port and "
                    + "target_session_attrs are)")
        }
        sessions = try TargetSessionAttributes(query["target_session_attrs"])
        guard let mode = SSLMode(rawValue: query["sslmode"] ?? "prefer") else {
            throw RegistryStoreError("sslmode is disable, prefer, require or verify-full")
        }
        // As libpq: ?port= is how a socket's URL, which has no HOST:PORT, names the port its socket file is named by.
        if let text = query["port"], Int(text) == nil { throw RegistryStoreError("port= is a number") }
        let port = url.port ?? query["port"].flatMap { Int($0) } ?? 5432
        guard (1...65535).contains(port) else { throw RegistryStoreError("the PostgreSQL port is 1 to 65535") }
        if list.hosts.count > 1 {
            // The port URLComponents read is the first host's own; the others' default is ?port= or 5432.
            let shared = query["port"].flatMap { Int($0) } ?? 5432
            endpoints = list.hosts.map { .tcp(host: $0.host, port: $0.port ?? shared) }
        } else if let host = url.host, !host.isEmpty {
            endpoints = [.tcp(host: host, port: port)]
        } else {
            endpoints = [.socket(path: "\(query["host"] ?? "/var/run/postgresql")/.s.PGSQL.\(port)")]
        }
        username = url.user.flatMap { $0.isEmpty ? nil : $0 } ?? Self.userRunningThis()
        password = url.password
        let path = url.path
        database = path.hasPrefix("/") ? String(path.dropFirst()) : path
        if database.isEmpty { database = username }
        sslMode = mode
        rootCertificate = query["sslrootcert"]
        if mode == .verifyFull, case .socket = endpoint {
            throw RegistryStoreError("sslmode=verify-full needs a host name, not a Unix socket")
        }
    }

    /// The URL without its password, for logs and messages.
    var description: String {
        let user = username.addingPercentEncoding(withAllowedCharacters: .urlUserAllowed) ?? username
        let name = database.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? database
        switch endpoint {
        case .tcp:
            let hosts = endpoints.map(Self.describe).joined(separator: ",")
            let attributes =
                sessions == .any && endpoints.count == 1 ? "" : "?target_session_attrs=\(sessions.rawValue)"
            return "postgres://\(user)@\(hosts)/\(name)\(attributes)"
        case .socket(let path): return "postgres://\(user)@/\(name) (socket \(path))"
        }
    }

    /// One host as a URL names it.
    static func describe(_ endpoint: Endpoint) -> String {
        switch endpoint {
        case .tcp(let host, let port): "\(host.contains(":") ? "[\(host)]" : host):\(port)"
        case .socket(let path): path
        }
    }

    /// The pool's configuration, for the first host.
    func configuration() throws(RegistryStoreError) -> PostgresClient.Configuration {
        try configuration(for: endpoint)
    }

    /// The pool's configuration for one of the hosts.
    func configuration(for endpoint: Endpoint) throws(RegistryStoreError) -> PostgresClient.Configuration {
        var configuration: PostgresClient.Configuration
        switch endpoint {
        case .socket(let path):
            configuration = .init(unixSocketPath: path, username: username, password: password, database: database)
        case .tcp(let host, let port):
            let tls = try tlsConfiguration()
            let mode: PostgresClient.Configuration.TLS =
                switch sslMode {
                case .disable: .disable
                case .prefer: .prefer(tls)
                case .require, .verifyFull: .require(tls)
                }
            configuration = .init(
                host: host, port: port, username: username, password: password, database: database, tls: mode)
        }
        configuration.options.connectTimeout = Self.connectTimeout
        configuration.options.additionalStartupParameters = Self.startupParameters
        return configuration
    }

    /// One connection's configuration, the same as the pool's: for what must fail at once rather than be retried
    /// by the pool (the first connection at start), for the first host.
    func connectionConfiguration() throws(RegistryStoreError) -> PostgresConnection.Configuration {
        try connectionConfiguration(for: endpoint)
    }

    /// One connection's configuration for one of the hosts (`PostgresPrimary` asks each what it is).
    func connectionConfiguration(for endpoint: Endpoint) throws(RegistryStoreError)
        -> PostgresConnection.Configuration
    {
        var configuration: PostgresConnection.Configuration
        switch endpoint {
        case .socket(let path):
            configuration = .init(unixSocketPath: path, username: username, password: password, database: database)
        case .tcp(let host, let port):
            let context: NIOSSLContext
            do {
                context = try NIOSSLContext(configuration: try tlsConfiguration())
            } catch {
                throw RegistryStoreError("cannot set TLS up for PostgreSQL: \(error)")
            }
            let mode: PostgresConnection.Configuration.TLS =
                switch sslMode {
                case .disable: .disable
                case .prefer: .prefer(context)
                case .require, .verifyFull: .require(context)
                }
            configuration = .init(
                host: host, port: port, username: username, password: password, database: database, tls: mode)
        }
        configuration.options.connectTimeout = .seconds(Self.connectTimeout.components.seconds)
        configuration.options.additionalStartupParameters = Self.startupParameters
        return configuration
    }

    private static let connectTimeout: Duration = .seconds(5)
    private static let startupParameters = [("application_name", "bike-registry")]

    private func tlsConfiguration() throws(RegistryStoreError) -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        if sslMode != .verifyFull { tls.certificateVerification = .none }
        if let rootCertificate {
            do {
                tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(rootCertificate))
            } catch {
                throw RegistryStoreError("cannot read sslrootcert \(rootCertificate): \(error)")
            }
        }
        return tls
    }

    private static func userRunningThis() -> String {
        guard let entry = getpwuid(geteuid()), let name = entry.pointee.pw_name else { return "postgres" }
        return String(cString: name)
    }
}
