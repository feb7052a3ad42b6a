// swift-tools-version: 6.0
// beacond: a missing-bike detector for a Raspberry Pi (see README.md).
import PackageDescription

let package = Package(
    name: "beacond",
    // Linux only, and no platforms line that says otherwise: the capture is BlueZ's and the kernel's, the service
    // systemd's, and the POSIX edge reads Linux's structures (st_mtim, SO_PEERCRED, SO_PEERGROUPS, recvmmsg).
    products: [
        .executable(name: "beacond", targets: ["beacond"]),
        .executable(name: "bike-registry", targets: ["bike-registry"]),
        // For the nested Fuzz package, which fuzzes these modules' parsers directly.
        .library(name: "BeaconWire", targets: ["BeaconWire"]),
        .library(name: "BeaconEngine", targets: ["BeaconEngine"]),
        .library(name: "BikeListJSON", targets: ["BikeListJSON"]),
        .library(name: "BeaconControl", targets: ["BeaconControl"]),
        .library(name: "StationSettings", targets: ["StationSettings"]),
        .library(name: "TextFormats", targets: ["TextFormats"]),
    ],
    dependencies: [
        // The command line: subcommands, --help, validation errors.
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // Typed file descriptors and errno values for the file and socket edges.
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        // Structured logging with levels and metadata; the daemon's journal lines.
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // The registry's REST API: HTTP/1.1 and 2, TLS verified, timeouts, streaming bodies with a size cap.
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        // Already under async-http-client; named for ByteBuffer and TimeAmount (NIOCore), HTTP methods (NIOHTTP1)
        // and to pin TLS certificate verification on explicitly (NIOSSL).
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.3"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        // The daemon's services: ordered start, graceful shutdown in reverse order on SIGTERM/SIGINT, SIGHUP.
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // SQLite for the outbox: transactions, WAL, migrations, without hand-written C calls.
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        // bike-registry's HTTP server; in the tests, also a registry on loopback with injectable faults.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        // bike-registry: hashes of station keys and owner tokens (SHA-256), webhook signatures (HMAC-SHA256).
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        // bike-registry: the HTTP parts (NIOHTTPTypes) its connection deadlines watch after the decoder; the station's
        // gzip inflated within a ratio (NIOHTTPCompression).
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        // The daemon's /metrics (metrics-listen) and bike-registry's (serve --metrics-listen): Prometheus's text format,
        // its names and types checked by the library.
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // bike-registry's PostgreSQL store, for a registry that serves many cafés from more than one machine.
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        // bike-registry's owner pages: Mustache templates, which escape what they show.
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.1"),
        // bike-registry: the stations' list gzip-compressed once per version (zlib), for stations that ask for it.
        .package(url: "https://github.com/adam-fowler/compress-nio", from: "1.5.0"),
    ],
    targets: [
        // libbluetooth (apt: libbluetooth-dev). Only BeaconCapture imports it.
        .systemLibrary(
            name: "CBlueZ",
            pkgConfig: "bluez",
            providers: [.apt(["libbluetooth-dev"])]
        ),
        // libdbus's headers (apt: libdbus-1-dev): BlueZ's D-Bus API. Headers only, with no library to link: its
        // pkg-config would name libdbus on every binary's link line (see CDBusLoad). Only BeaconDBus imports it.
        .systemLibrary(name: "CDBus"),
        // Defines the libdbus functions BeaconDBus calls, through pointers looked up when D-Bus is first used, so
        // that only a daemon that uses D-Bus loads it (and the libraries it needs) at all.
        .target(
            name: "CDBusLoad", dependencies: ["CDBus", "CLazyLibrary"],
            cSettings: [.unsafeFlags(dbusHeaders.flatMap { ["-I", $0] })]),
        // The one way an optional library is loaded on first use: a list of its functions in, definitions calling
        // through pointers looked up by dlopen/dlsym and an ELF .note.dlopen naming it out (CDBusLoad, CMosquittoLoad).
        .target(name: "CLazyLibrary"),
        // libmosquitto's header (apt: libmosquitto-dev), the Eclipse Mosquitto project's MQTT client library. Headers
        // only, as CDBus: CMosquittoLoad loads it when MQTT is configured. Only BeaconMQTT imports it.
        .systemLibrary(name: "CMosquitto"),
        .target(name: "CMosquittoLoad", dependencies: ["CMosquitto", "CLazyLibrary"]),
        // An MQTT client over libmosquitto: QoS 1 publishing awaited to the broker's acknowledgement, subscriptions
        // kept across reconnections, a last will, TLS with the broker's certificate verified.
        .target(
            name: "BeaconMQTT",
            dependencies: ["CMosquitto", "CMosquittoLoad", "BeaconPOSIX", "DaemonSupport", "LockedValue"]
        ),
        // The station's MQTT side: the sink the MQTT poster delivers to, availability and Home Assistant's
        // discovery, events and sensors.
        .target(
            name: "BeaconMQTTStation",
            dependencies: [
                "StationSettings", "LockedValue",
                "BeaconMQTT", "BeaconDelivery", "BeaconControl", "BeaconEngine", "BeaconWire", "DaemonSupport",
                .product(name: "Logging", package: "swift-log"),
            ]),
        // GNU extensions of the C library that Glibc's Swift module leaves out (thread names, adjtimex).
        .target(name: "CSystemShims"),
        // A small typed layer over libdbus: connection, method calls that keep serving incoming calls while
        // waiting (bluetoothd calls back before it answers), signals, and values to and from messages.
        .target(
            name: "BeaconDBus",
            dependencies: ["CDBus", "CDBusLoad", "BeaconPOSIX"],
            swiftSettings: [.unsafeFlags(dbusHeaders.flatMap { ["-Xcc", "-I", "-Xcc", $0] })]
        ),
        // The POSIX edge, as NIOPosix and swift-system are to theirs: whole and chunked file reads with size limits,
        // renames and fsync, the damaged-file helper, Unix sockets and their addresses, the system's clocks, and the
        // one EINTR loop every system call goes through. Nothing of beacond's domain.
        .target(
            name: "BeaconPOSIX",
            dependencies: ["LockedValue", "CSystemShims", .product(name: "SystemPackage", package: "swift-system")]),
        // What beacond and bike-registry share at their edges: sd_notify, the doorbell a worker waits on, the deadline
        // for a whole exchange, the release's version.
        .target(name: "DaemonSupport", dependencies: ["LockedValue", "BeaconPOSIX"]),
        // The stations' list as both programs hold it, and its changes from one version to another: what the registry
        // works out and a station applies, with the checksum both compute. Pure; the one module besides DaemonSupport
        // that beacond and bike-registry share, so the format is written once.
        .target(name: "ListChanges"),
        // A value behind a pthread mutex, which ThreadSanitizer sees (Synchronization.Mutex's contended hand-over it does
        // not), with a take-if-free: for the engine's mailbox and libmosquitto's thread. Imports nothing.
        .target(name: "LockedValue"),
        // How both programs write the text others read, once: JSON strings (RFC 8259) and the civil date of a day count
        // (RFC 3339's dates). Pure; imports nothing.
        .target(name: "TextFormats"),
        // Pure bytes -> values: capture containers, HCI events, AD structures, iBeacon frames.
        // No I/O, no clock, no Foundation.
        .target(name: "BeaconWire", dependencies: ["TextFormats"]),
        // Pure: the registry's bike list (GET /bikes, and the station's cache of it) read from its JSON an entry at a time,
        // into the engine's missing-bike set. Out of the registry client, so the fuzzer and the benchmark reach it
        // without the HTTP stack.
        .target(name: "BikeListJSON", dependencies: ["BeaconEngine"]),
        // Pure logic: the capture-to-engine ring, regions, the missing-bike set, ranging and the sighting
        // policy, all on injected time. No I/O.
        .target(name: "BeaconEngine", dependencies: ["BeaconWire", "LockedValue"]),
        // The durable outbox: sightings committed to SQLite before any network attempt.
        .target(name: "BeaconOutbox", dependencies: ["BeaconEngine", .product(name: "GRDB", package: "GRDB.swift")]),
        // Between the outbox and the sinks: the sink protocol, the sighting as it leaves the station, and the poster
        // (with its pure policy) that drains each sink's line of the outbox. Knows no sink.
        .target(
            name: "BeaconDelivery",
            dependencies: [
                "BeaconEngine", "BeaconOutbox", "DaemonSupport", "LockedValue",
                .product(name: "Logging", package: "swift-log"),
            ]),
        // The station's side of the registry (the client; bike-registry's own modules are BikeRegistry*): missing-set
        // refresh with offline cache, the bike list, and the registry as a sink (HTTP or file).
        .target(
            name: "BeaconRegistryClient",
            dependencies: [
                "StationSettings", "LockedValue",
                "BeaconEngine", "BeaconWire", "BeaconDelivery", "BeaconPOSIX", "DaemonSupport", "ListChanges",
                "BikeListJSON", "TextFormats", .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                // The list's gzip inflated within a ratio (already under async-http-client): its errors, said plainly.
                .product(name: "NIOHTTPCompression", package: "swift-nio-extras"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // The control socket: `beacond status` and its friends, the report they read, server (on swift-nio) and client.
        .target(
            name: "BeaconControl",
            dependencies: [
                "BeaconPOSIX", .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]),
        // `/metrics` for Prometheus: the page made from a status report, and the HTTP listener (swift-nio).
        .target(
            name: "BeaconMetrics",
            dependencies: [
                "StationSettings", "LockedValue",
                "BeaconControl", "BeaconEngine", "BeaconWire", "BeaconPOSIX",
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"), .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]),
        // The station's settings: the table of keys (from which the file, the flags, --help and SIGHUP's comparison
        // come), the file's reader, and the values the keys hold (addresses, the backend's name). Pure, so the config
        // fuzzer builds none of the I/O stack, and the modules that take those values share one spelling of them.
        .target(name: "StationSettings", dependencies: ["BeaconEngine", "BeaconWire", "BeaconPOSIX", "TextFormats"]),
        // The daemon: the capture, engine, delivery, control, metrics and health services wired
        // into one ServiceGroup. No @main, so tests can drive it.
        .target(
            name: "BeaconDaemon",
            dependencies: [
                "StationSettings", "LockedValue",
                "BeaconEngine", "BeaconWire", "BeaconRegistryClient", "BeaconDelivery", "BeaconOutbox", "BeaconCapture",
                "BeaconPOSIX",
                "DaemonSupport", "BeaconMQTT", "BeaconMQTTStation", "BeaconControl", "BeaconMetrics",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]
        ),
        // The edge that touches files and the radio: capture files streamed through BeaconWire, and live capture
        // (raw HCI, the monitor channel, bluetoothd over D-Bus) with its stall watchdog.
        .target(
            name: "BeaconCapture",
            dependencies: [
                "StationSettings",
                "BeaconWire", "BeaconDBus", "BeaconPOSIX", "CBlueZ", "CSystemShims",
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // Command-line front ends and their text output, kept out of main.swift so tests can drive them.
        .target(
            name: "BeaconCLI",
            dependencies: [
                "StationSettings", "LockedValue",
                "BeaconWire", "BeaconCapture", "BeaconEngine", "BeaconDaemon", "BeaconControl", "BeaconRegistryClient",
                "BeaconDBus", "BeaconPOSIX", "DaemonSupport", "BeaconMQTT", "BikeListJSON", "TextFormats",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        .executableTarget(
            name: "beacond",
            dependencies: ["BeaconCLI", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),

        // bike-registry's domain, pure: the model, missing reports and their rules, claim codes, rotating windows,
        // notification channels, and each decision a store's transaction applies. No database, no I/O, no clock.
        .target(
            name: "BikeRegistryCore",
            dependencies: ["TextFormats", .product(name: "Crypto", package: "swift-crypto")]),
        // bike-registry's storage: stations, bikes, sightings and the notifications owed, in one SQLite file (GRDB) or
        // a PostgreSQL database (postgres-nio), the same schema and the same SQL in both. No HTTP.
        .target(
            name: "BikeRegistryStore",
            dependencies: [
                "BikeRegistryCore", "DaemonSupport", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                // Locks ThreadSanitizer sees (Synchronization.Mutex hands a contended lock over through futexes it
                // does not instrument), as in BikeRegistryServer and the registry's tests.
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // libcurl (apt: libcurl4-openssl-dev): its SMTP client, STARTTLS and AUTH, for bike-registry's mail. Only
        // BikeRegistryMail imports it.
        .systemLibrary(name: "CCurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        // bike-registry's mail: addresses, messages as RFC 5322 and MIME write them, and the operator's relay.
        .target(name: "BikeRegistryMail", dependencies: ["CCurl"]),
        // bike-registry's HTTP API (docs/registry-api.yaml) and the worker that delivers owners' notifications.
        .target(
            name: "BikeRegistryServer",
            dependencies: [
                "BikeRegistryCore", "BikeRegistryStore", "BikeRegistryMail", "DaemonSupport", "BeaconPOSIX",
                "ListChanges",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "CompressNIO", package: "compress-nio"),
            ]
        ),
        // bike-registry's command line: serve, and the operator's station commands.
        .executableTarget(
            name: "bike-registry",
            dependencies: [
                "BikeRegistryServer", "BikeRegistryCore", "BikeRegistryStore", "BikeRegistryMail", "DaemonSupport",
                "BeaconPOSIX", "TextFormats", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "Logging", package: "swift-log"), .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                // `status` reads a running server's metrics page.
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "BikeRegistryTests",
            dependencies: [
                "StationSettings",
                "BikeRegistryServer", "BikeRegistryCore", "BikeRegistryStore", "BikeRegistryMail", "BeaconTestSupport",
                "BeaconRegistryClient", "BeaconDelivery",
                "BeaconEngine",
                "BeaconWire", "RegistryTestServer",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"), .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"), .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]),

        .testTarget(name: "BikeRegistryCoreTests", dependencies: ["BikeRegistryCore"]),
        .testTarget(name: "ListChangesTests", dependencies: ["ListChanges"]),
        .testTarget(name: "TextFormatsTests", dependencies: ["TextFormats"]),
        .testTarget(
            name: "StationSettingsTests",
            dependencies: ["StationSettings", "BeaconEngine", "BeaconWire", "BeaconTestSupport", "TextFormats"]),
        .testTarget(name: "BeaconWireTests", dependencies: ["BeaconWire", "BeaconTestSupport"]),
        .testTarget(
            name: "BeaconDaemonTests",
            dependencies: [
                "LockedValue",
                "BeaconDaemon", "BeaconControl", "DaemonSupport", "BeaconEngine",
                "BeaconRegistryClient", "BeaconDelivery", "BeaconOutbox", "BeaconWire", "BeaconTestSupport",
                "BeaconMQTT", "BeaconPOSIX",
                "BeaconMQTTStation", .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]),
        .testTarget(name: "BeaconEngineTests", dependencies: ["BeaconEngine", "BeaconWire", "BeaconTestSupport"]),
        .testTarget(
            name: "BeaconOutboxTests",
            dependencies: [
                "BeaconOutbox", "BeaconEngine", "BeaconTestSupport", .product(name: "GRDB", package: "GRDB.swift"),
            ]),
        .testTarget(
            name: "BeaconRegistryClientTests",
            dependencies: [
                "StationSettings", "LockedValue",
                "BeaconRegistryClient", "BeaconDelivery", "BeaconOutbox", "BeaconEngine", "BeaconWire", "ListChanges",
                "BeaconTestSupport", "RegistryTestServer", "DaemonSupport", "BikeListJSON",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
            ]),
        .testTarget(
            name: "BeaconDeliveryTests", dependencies: ["BeaconDelivery", "BeaconTestSupport", "DaemonSupport"]),
        .testTarget(
            name: "BeaconCaptureTests",
            dependencies: ["LockedValue", "BeaconCapture", "BeaconWire", "BeaconTestSupport", "CBlueZ"]),
        .testTarget(name: "BeaconDBusTests", dependencies: ["BeaconDBus", "BeaconTestSupport"]),
        .testTarget(name: "BeaconMQTTTests", dependencies: ["BeaconMQTT", "BeaconTestSupport"]),
        .testTarget(
            name: "BeaconPOSIXTests",
            dependencies: ["BeaconPOSIX", .product(name: "SystemPackage", package: "swift-system")]),
        .testTarget(
            name: "BeaconCLITests",
            dependencies: ["TextFormats", 
                "StationSettings", "LockedValue",
                "BeaconCLI", "BeaconDaemon", "BeaconControl", "BeaconDelivery", "BeaconWire", "BeaconTestSupport",
                "RegistryTestServer", "BeaconPOSIX", "BeaconMQTT", "BeaconOutbox", "BeaconCapture", "DaemonSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]),
        // The crash test's child: queues and posts sightings until killed (see OutboxCrashTests).
        .executableTarget(
            name: "OutboxCrashChild",
            dependencies: [
                "BeaconEngine", "BeaconOutbox", "BeaconDelivery", "BeaconRegistryClient", "BeaconWire", "DaemonSupport",
                "StationSettings",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            path: "Tests/OutboxCrashChild"
        ),
        // A registry on loopback for the tests, with injectable faults (Hummingbird).
        .target(
            name: "RegistryTestServer",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"), .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "CompressNIO", package: "compress-nio"),
            ],
            path: "Tests/RegistryTestServer"
        ),
        // Fixture paths and the expected-decode loader shared by the test targets.
        .target(
            name: "BeaconTestSupport",
            dependencies: [
                "LockedValue",
                "BeaconWire", "BeaconEngine", .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio"),
            ], path: "Tests/BeaconTestSupport"),
    ]
)

// Stricter language features for every target, as swift-log does.
for target in package.targets where target.type != .system {
    target.swiftSettings =
        (target.swiftSettings ?? []) + [
            .enableUpcomingFeature("ExistentialAny"),
            .enableUpcomingFeature("MemberImportVisibility"),
            .enableUpcomingFeature("InternalImportsByDefault"),
        ]
}

/// Where Debian's libdbus-1-dev puts the headers `pkg-config --cflags dbus-1` names: the API, and one
/// architecture's types under its multiarch directory. Named here rather than through pkgConfig, which would put
/// `-ldbus-1` on the link line as well. This manifest is compiled for the machine that builds, not the one the
/// binary is for, so it cannot pick the target's directory: it names the target's under the sysroot first (a path
/// starting with `=` is the sysroot's to clang, for a cross build with a Swift SDK: scripts/setup-arm64), then the
/// build machine's own for a native build, which has no sysroot. A directory that is not there is passed over.
var dbusHeaders: [String] {
    let multiarch = ["aarch64-linux-gnu", "x86_64-linux-gnu", "arm-linux-gnueabihf"]
    let sysroot = ["=/usr/include/dbus-1.0"] + multiarch.map { "=/usr/lib/\($0)/dbus-1.0/include" }
    #if arch(x86_64)
    let host = "x86_64-linux-gnu"
    #elseif arch(arm64)
    let host = "aarch64-linux-gnu"
    #else
    let host = "arm-linux-gnueabihf"
    #endif
    return sysroot + ["/usr/include/dbus-1.0", "/usr/lib/\(host)/dbus-1.0/include"]
}

// BEACOND_TEST_TARGETS=A,B keeps only those test targets, so that `swift build --build-tests` builds and links just
// them: scripts/test-arm64 runs the pure suites on arm64 under qemu, and the others need servers, a kernel's sockets
// or libraries Debian's cross toolchain lacks.
if let kept = Context.environment["BEACOND_TEST_TARGETS"] {
    let names = Set(kept.split(separator: ",").map(String.init))
    package.targets.removeAll { $0.type == .test && !names.contains($0.name) }
}

// beacond's benchmarks (Benchmarks/Sources, BENCHMARKS.md), only when BEACOND_BENCHMARKS is set, as Hummingbird keeps
// its own: `scripts/build-release --benchmarks` (Benchmarks/run) builds them with the shipping binary's flags, so the
// modules they measure are compiled once and are the ones that ship; `swift build` and `swift test` never see them.
if Context.environment["BEACOND_BENCHMARKS"] != nil {
    // Deque, for the mutex-guarded queue the advert ring is compared with.
    package.dependencies.append(.package(url: "https://github.com/apple/swift-collections", from: "1.6.0"))
    let path = { (name: String) in "Benchmarks/Sources/\(name)" }
    package.targets += [
        // The plain C loop beacond's decoder is compared with, in the same process and run. Both it and the decode
        // benchmark (where beacond's inlinable record loop is compiled) place every function on a 64-byte line and
        // every loop on a 32-byte boundary: left to the linker, a change anywhere in the binary moved the two hot
        // loops across cache lines and the same code measured anywhere from 1.20x to 1.42x.
        .target(
            name: "CDecodeLoop", path: path("CDecodeLoop"),
            cSettings: [.unsafeFlags(["-O2", "-falign-functions=64", "-falign-loops=32"])]),
        // Counts heap allocations so "zero allocations per report" is measured, not assumed.
        .target(name: "CMallocCounter", path: path("CMallocCounter")),
        .executableTarget(
            name: "DecodeBenchmark", dependencies: ["CDecodeLoop", "CMallocCounter", "BeaconWire", "BeaconCapture"],
            path: path("DecodeBenchmark"),
            swiftSettings: [.unsafeFlags(["-Xllvm", "-align-all-functions=6", "-Xllvm", "-align-loops=32"])]),
        // Ring and engine: the advert ring against a mutex-guarded Deque, and adverts through ring + engine with every
        // minor missing, against the decoder's own cost measured in the same run.
        .executableTarget(
            name: "EngineBenchmark",
            dependencies: [
                "CMallocCounter", "BeaconWire", "BeaconCapture", "BeaconEngine",
                .product(name: "DequeModule", package: "swift-collections"),
            ],
            path: path("EngineBenchmark")),
        // The live capture path (socketpair → HCICapture → decoder → ring) against bare reads, and the stall
        // watchdog's reaction time.
        .executableTarget(
            name: "LiveBenchmark",
            dependencies: [
                "BeaconWire", "BeaconCapture", "BeaconEngine", "BeaconDaemon", "BeaconOutbox",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: path("LiveBenchmark")),
        // The registry's bike list into the set matching needs, read as it arrives, against decoding it whole.
        .executableTarget(
            name: "BikeListBenchmark", dependencies: ["BeaconWire", "BeaconEngine", "BikeListJSON"],
            path: path("BikeListBenchmark")),
        // Committing sightings to the SQLite outbox against write(2) + fsync(2) of the same bytes.
        .executableTarget(
            name: "OutboxBenchmark", dependencies: ["BeaconEngine", "BeaconOutbox"], path: path("OutboxBenchmark")),
    ]
}
