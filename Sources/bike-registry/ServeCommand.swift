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

/// `bike-registry serve`: the station and owner API, the notifications' worker and the sweeps, as one service.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the station and owner API and deliver owners' notifications.",
        discussion: """
            Durations are a whole number with s, m, h or d (15s, 2m, 30d); a bare number is seconds. Every wait has a \
            bound: a request's head, an idle connection, a delivery to an owner's endpoint, the connections served at \
            once (past --max-connections new clients wait in the listen queue). The defaults suit one registry for \
            many cafés; the unit's LimitNOFILE= is sized for --max-connections.

            Every option is also a line of the settings file (`listen = 0.0.0.0:8180`, `allow-private-webhooks = \
            true`) and a variable (BIKE_REGISTRY_LISTEN, as an EnvironmentFile= sets it). The command line wins over \
            the environment, the environment over the file. An error in the file or the environment names its line \
            or variable and exits 78.
            """)

    @Option(
        help: ArgumentHelp(
            "Settings file of key = value lines, each key a long option (default \(ServeSettings.defaultPath), if it exists).",
            valueName: "path"))
    var config: String?
    @Option(help: "HOST:PORT to listen on.") var listen = "127.0.0.1:8180"
    @OptionGroup var database: DatabaseOption
    @Option(
        help: ArgumentHelp(
            "Where owners reach this registry, as https://HOST[:PORT] (or http:// for a test).",
            discussion: """
                The only source of the links the owner's pages show (the private link to save); without it they show \
                the link relative to the site, and the page's script writes it whole from the browser's address bar. \
                https also makes the registration form's cookie Secure.
                """))
    var publicURL: String?
    @Option(
        help: ArgumentHelp(
            "How owners register a bike: claim-code or open.",
            discussion: """
                claim-code (the default): only with the claim code printed on a beacon the operator issued \
                (`bike-registry beacons issue`). open: also by a beacon's UUID, major and minor, first come first served, \
                so anyone who overhears a beacon not yet registered can register it and follow its bike; for a closed \
                club that hands beacons out in person.
                """))
    var registration = RegistrationMode.claimCode
    @Flag(help: "Allow webhook and ntfy targets on loopback and private addresses (a café's own network, tests).")
    var allowPrivateWebhooks = false
    @Option(help: "Days sightings are kept.") var retentionDays = 90
    @Option(help: "Registrations one network (an IPv4 address, an IPv6 /64) may make per minute.")
    var registrationsPerMinute = 20
    @Option(help: "Registrations everyone together may make per minute.") var registrationsPerMinuteTotal = 120
    @Option(
        help: "A missing report lapses this long after it was made or last renewed; the bike leaves the stations' list."
    )
    var missingLapse = DurationArgument(seconds: 30 * 86_400, "30d")
    @Option(help: "The owner is reminded this long before their report lapses.")
    var missingReminder = DurationArgument(seconds: 3 * 86_400, "3d")
    @Option(help: "Wrong claim codes one network may send in a day before it may not register until that day is over.")
    var wrongClaimCodesPerDay = 10
    @Option(help: "Beacon lookups (Found a beacon?) one network may make per minute.") var beaconLookupsPerMinute = 30
    @Option(help: "Beacon lookups everyone together may make per minute.") var beaconLookupsPerMinuteTotal = 600
    @Option(help: "Requests for a message's links (confirm, unsubscribe, sightings) one network may make per minute.")
    var mailLinksPerMinute = 60
    @Option(help: "Reports of a beacon placed without consent one network may make per day.")
    var abuseReportsPerDay = 5
    @Option(help: "Reports of a beacon placed without consent everyone together may make per day.")
    var abuseReportsPerDayTotal = 200
    @Option(help: "Requests one station key, or one owner token, may make per minute.") var requestsPerMinute = 600
    @Option(help: "A request's head must arrive within this of its first byte.")
    var requestHeadTimeout = DurationArgument(seconds: 10, "10s")
    @Option(help: "A connection with no request under way is closed after this.")
    var idleTimeout = DurationArgument(seconds: 60, "60s")
    @Option(
        help: ArgumentHelp(
            "On SIGTERM, how long to go on serving after /readyz says 503, before closing.",
            discussion: """
                Long enough for every load balancer to check /readyz and stop sending (HAProxy's 'inter 1s fall 2' \
                needs 2 s); 0 stops at once. The server then finishes the requests it holds.
                """))
    var drainDelay = DurationArgument(seconds: 5, "5s")
    @Option(help: "Connections served at once.") var maxConnections = 8_192
    @Option(
        help: ArgumentHelp(
            "Lists served lately that a station may hold and be sent only the changes since.",
            discussion: """
                A station that holds an older list is sent the whole list. 96 is a day of rotating beacons' 15-minute \
                windows. Each list held costs about its entries' bytes (--list-history-bytes bounds them all).
                """))
    var listHistory = 96
    @Option(help: "Megabytes the lists held for their changes may take.") var listHistoryMegabytes = 64
    @Option(help: "Notifications delivered at once; one endpoint holds at most one.") var deliveryLanes = 16
    @Option(help: "One delivery's whole deadline: lookup, connection, answer and its body.")
    var deliveryTimeout = DurationArgument(seconds: 15, "15s")
    @OptionGroup(title: "E-mail to owners") var mail: MailOptions
    @OptionGroup(title: "Rotating beacons") var beaconKeys: BeaconKeyFileOption
    @Option(
        help: ArgumentHelp(
            "HOST:PORT to serve Prometheus's /metrics on, a listener of its own (off unless given).",
            discussion: """
                Requests by route and status, sightings and notifications by outcome, messages owed, each station's \
                last refresh and sighting, the database's operations and errors, the limits' refusals. Never the \
                public --listen address: keep it on loopback or a network only the operator's Prometheus reaches. \
                `bike-registry status` reads it.
                """))
    var metricsListen: String?
    @Option(help: "trace, debug, info, notice, warning or error.") var logLevel = "info"
    @Option(
        help: ArgumentHelp(
            "Connections to PostgreSQL at most (readers of a SQLite file).",
            discussion:
                "Each server of a shared database takes up to this many of the PostgreSQL server's max_connections (100 by default)."
        ))
    var databaseConnections = 16

    /// Descriptors kept for everything but client connections: the database's, the deliveries', the log's.
    static let descriptorsBesideConnections = 256

    func validate() throws {
        guard let served = Self.split(listen) else {
            throw ValidationError("--listen is HOST:PORT, for example 127.0.0.1:8180")
        }
        if let metricsListen {
            guard let metrics = Self.split(metricsListen) else {
                throw ValidationError("--metrics-listen is HOST:PORT, for example 127.0.0.1:9180")
            }
            guard metrics.port != served.port || metrics.port == 0 else {
                throw ValidationError("--metrics-listen needs a port of its own, not --listen's \(served.port)")
            }
        }
        guard retentionDays >= 1 else { throw ValidationError("--retention-days is at least 1") }
        guard (2...1000).contains(databaseConnections) else {
            throw ValidationError("--database-connections is 2 to 1000")
        }
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("--log-level is trace, debug, info, notice, warning or error")
        }
        if let publicURL, PublicURL.checked(publicURL) == nil {
            throw ValidationError(
                "--public-url is http(s)://HOST[:PORT] with no path, query or user, for example https://bikes.example.org"
            )
        }
        for (name, value, range) in [
            ("--registrations-per-minute", registrationsPerMinute, 1...1_000_000_000),
            ("--registrations-per-minute-total", registrationsPerMinuteTotal, 1...1_000_000_000),
            ("--requests-per-minute", requestsPerMinute, 1...1_000_000_000),
            ("--wrong-claim-codes-per-day", wrongClaimCodesPerDay, 1...1_000_000_000),
            ("--beacon-lookups-per-minute", beaconLookupsPerMinute, 1...1_000_000_000),
            ("--abuse-reports-per-day", abuseReportsPerDay, 1...1_000_000_000),
            ("--beacon-lookups-per-minute-total", beaconLookupsPerMinuteTotal, 1...1_000_000_000),
            ("--abuse-reports-per-day-total", abuseReportsPerDayTotal, 1...1_000_000_000),
            ("--mail-links-per-minute", mailLinksPerMinute, 1...1_000_000_000),
            ("--max-connections", maxConnections, 16...1_000_000), ("--delivery-lanes", deliveryLanes, 1...1_000),
            ("--request-head-timeout", requestHeadTimeout.seconds, 1...3_600),
            ("--idle-timeout", idleTimeout.seconds, 1...86_400),
            ("--delivery-timeout", deliveryTimeout.seconds, 1...600),
            ("--missing-lapse", missingLapse.seconds, 1...3_650 * 86_400),
            ("--drain-delay", drainDelay.seconds, 0...600), ("--list-history", listHistory, 1...10_000),
            ("--list-history-megabytes", listHistoryMegabytes, 1...65_536),
        ] where !range.contains(value) {
            throw ValidationError("\(name) is \(range.lowerBound) to \(range.upperBound)")
        }
        if mail.smtp != nil && publicURL == nil {
            throw ValidationError("--smtp needs --public-url: every message carries a link to this registry")
        }
        guard missingReminder.seconds < missingLapse.seconds else {
            throw ValidationError("--missing-reminder is shorter than --missing-lapse")
        }
    }

    static func split(_ address: String) -> (host: String, port: Int)? {
        guard let colon = address.lastIndex(of: ":"), let port = Int(address[address.index(after: colon)...]),
            (0...65535).contains(port)
        else { return nil }
        let host = String(address[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        return host.isEmpty ? nil : (host, port)
    }

    /// What the server counts for the metrics, where it serves them, and the store's connections they show.
    private func setMetrics(_ configuration: inout RegistryServerConfiguration, _ metrics: RegistryMetrics?) {
        configuration.metrics = metrics
        configuration.metricsListen = metricsListen.flatMap(Self.split).map {
            MetricsListen(host: $0.host, port: $0.port)
        }
        configuration.databaseConnections = databaseConnections
    }

    /// The limits on anonymous clients (`SharedLimits`), beside the two the configuration is made with.
    private func setLimits(_ configuration: inout RegistryServerConfiguration) {
        configuration.registrationsPerMinuteTotal = registrationsPerMinuteTotal
        configuration.wrongClaimCodesPerDay = wrongClaimCodesPerDay
        configuration.beaconLookupsPerMinute = beaconLookupsPerMinute
        configuration.abuseReportsPerDay = abuseReportsPerDay
        configuration.beaconLookupsPerMinuteTotal = beaconLookupsPerMinuteTotal
        configuration.abuseReportsPerDayTotal = abuseReportsPerDayTotal
        configuration.mailLinksPerMinute = mailLinksPerMinute
        configuration.listHistoryVersions = listHistory
        configuration.listHistoryBytes = listHistoryMegabytes << 20
    }

    func run() async throws {
        LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
        var logger = Logger(label: "bike-registry")
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
        let metrics = metricsListen.map { _ in RegistryMetrics(version: ReleaseVersion.current) }
        let database = try await database.open(
            connections: databaseConnections, postgresDeadline: PostgresRegistryStore.standardDeadline,
            observer: metrics, logger: logger)
        let (host, port) = Self.split(listen)!
        var configuration = RegistryServerConfiguration(
            host: host, port: port, allowPrivateWebhooks: allowPrivateWebhooks,
            retention: .seconds(retentionDays * 86_400),
            registrationsPerMinute: registrationsPerMinute, requestsPerMinute: requestsPerMinute)
        configuration.registration = registration
        setMetrics(&configuration, metrics)
        setLimits(&configuration)
        configuration.missingReports = MissingReportRules(
            lapse: TimeInterval(missingLapse.seconds), reminder: TimeInterval(missingReminder.seconds))
        configuration.requestHeadTimeout = requestHeadTimeout.duration
        configuration.idleTimeout = idleTimeout.duration
        configuration.deliveryLanes = deliveryLanes
        configuration.deliveryDeadline = deliveryTimeout.duration
        configuration.publicURL = publicURL.flatMap(PublicURL.checked)
        configuration.maximumConnections = connections(logger: logger)
        configuration.beaconKeys = try beaconKeys.sealerIfGiven()
        if configuration.beaconKeys == nil {
            logger.info(
                "rotating beacons are off: no --key-file (or credential beacon-key), so their missing bikes are not listed and their sightings are unverified"
            )
        }
        // One message's exchange ends within the delivery's deadline, as a webhook's does.
        if let relay = try mail.relay(timeout: .seconds(max(5, deliveryTimeout.seconds - 1))) {
            configuration.mail = MailSettings(
                relay: relay,
                limits: EmailLimits(
                    perBikePerDay: mail.confirmationsPerBikePerDay,
                    perAddressPerDay: mail.confirmationsPerAddressPerDay))
            logger.info("e-mail to owners through \(relay.url), from \(relay.from.address)")
        } else {
            logger.info("e-mail to owners is off: no --smtp relay, so the pages do not offer it")
        }
        if registration == .open {
            logger.warning(
                "open registration (--registration open): anyone may register a beacon that is not registered yet by its uuid, major and minor, which any scanner app shows, mark it missing and be told where its bike stops; use it only where beacons are handed out in person"
            )
        }
        if configuration.publicURL == nil {
            logger.info(
                "no --public-url: the owner's pages show their links relative to the site (set it to where owners reach this registry)"
            )
        }
        do {
            try await serve(database: database, configuration: configuration, logger: logger)
        } catch {
            await database.close()
            throw error
        }
        await database.close()
    }

    /// The server until it stops: on SIGTERM after its drain delay (`DrainOnSignal`), on SIGINT at once.
    private func serve(database: any RegistryStore, configuration: RegistryServerConfiguration, logger: Logger)
        async throws
    {
        let drain = DrainOnSignal(readiness: configuration.readiness, delay: drainDelay.duration, logger: logger)
        let application = RegistryApplication.make(database: database, configuration: configuration, logger: logger)
        try await ServiceGroup(
            configuration: .init(
                services: [
                    .init(service: application),
                    .init(service: drain, successTerminationBehavior: .gracefullyShutdownGroup),
                ],
                gracefulShutdownSignals: [.sigint], logger: logger)
        ).run()
    }

    /// --max-connections, within the descriptors the process may open: its soft limit is raised to fit (systemd
    /// starts a service at 1024 whatever its hard limit), and where the hard limit is lower, fewer connections are
    /// served, with a warning, rather than clients refused by a server out of descriptors.
    private func connections(logger: Logger) -> Int {
        let wanted = maxConnections + Self.descriptorsBesideConnections
        let limit = DescriptorLimit.raise(toward: wanted)
        guard limit < wanted else { return maxConnections }
        let fitting = max(16, limit - Self.descriptorsBesideConnections)
        logger.warning(
            "the descriptor limit is \(limit) (LimitNOFILE=): serving \(fitting) connections at once, not --max-connections \(maxConnections)"
        )
        return fitting
    }
}
