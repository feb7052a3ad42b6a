import BeaconTestSupport
import BikeRegistryCore
import Foundation
import Logging
import Testing

@testable import BikeRegistryStore

/// `--database` with several hosts, as libpq takes it (issue 52): read as libpq reads it, and a store that opens on
/// the first host that will do and follows it when it stops taking writes, on the real test server.
@Suite(.timeLimit(.minutes(5))) struct PostgresHostsTests {
    @Test func severalHostsAreReadAsLibpqReadsThem() throws {
        let location = try PostgresLocation(
            "postgres://registry:secret@db1.example:5433,[2001:db8::1]:6432,db3.example/bikes?target_session_attrs=read-write&sslmode=disable"
        )
        #expect(
            location.endpoints == [
                .tcp(host: "db1.example", port: 5433), .tcp(host: "2001:db8::1", port: 6432),
                .tcp(host: "db3.example", port: 5432),
            ])
        #expect(location.sessions == .readWrite && location.database == "bikes" && location.username == "registry")
        #expect(location.password == "secret" && location.sslMode == .disable)
        #expect(
            location.description
                == "postgres://registry@db1.example:5433,[2001:db8::1]:6432,db3.example:5432/bikes?target_session_attrs=read-write"
        )
        // One host is as it always was; ?port= is every host's default, as libpq has it.
        #expect(try PostgresLocation("postgres://u@db:6000/x").endpoints == [.tcp(host: "db", port: 6000)])
        #expect(
            try PostgresLocation("postgres://u@a,b:7000/x?port=6000").endpoints == [
                .tcp(host: "a", port: 6000), .tcp(host: "b", port: 7000),
            ])
        #expect(try PostgresLocation("postgres://u@a/x?target_session_attrs=primary").sessions == .primary)
        #expect(try PostgresLocation("postgres://u@a,b/x").sessions == .any)
    }

    @Test(arguments: [
        ("postgres://u@a,,b/x", "empty entry"), ("postgres://u@a,b:0/x", "1 to 65535"),
        ("postgres://u@a,b:port/x", "1 to 65535"), ("postgres://u@a,[::1/x", "no closing ]"),
        ("postgres://u@a,b/x?target_session_attrs=standby", "read-write, primary or any"),
        ("postgres://u@a,b/x?target_session_attrs=read-only", "read-write, primary or any"),
    ])
    func aHostListThatCannotBeReadSaysWhy(url: String, said: String) {
        #expect {
            try PostgresLocation(url)
        } throws: { error in
            "\(error)".contains(said)
        }
    }

    @Test func readWriteTakesASessionThatMayWriteAndPrimaryOneNotInRecovery() {
        #expect(TargetSessionAttributes.readWrite.accepts(inRecovery: false, readOnly: false))
        #expect(!TargetSessionAttributes.readWrite.accepts(inRecovery: false, readOnly: true))
        #expect(!TargetSessionAttributes.readWrite.accepts(inRecovery: true, readOnly: true))
        #expect(TargetSessionAttributes.primary.accepts(inRecovery: false, readOnly: true))
        #expect(!TargetSessionAttributes.primary.accepts(inRecovery: true, readOnly: true))
        #expect(TargetSessionAttributes.any.accepts(inRecovery: true, readOnly: true))
    }

    /// A host that refuses connections before the real server is passed over at open. Then the database stops
    /// taking writes (its sessions made read-only, as a demoted primary's are, and its connections ended): the
    /// store's writes fail, it finds no host that will do and says so at once rather than wait out its deadline,
    /// and it takes writes again once the database does, without a restart.
    @Test func aStoreOpensOnTheHostThatTakesWritesAndFollowsItBack() async throws {
        try await TestPostgres.requireServer()
        let directory = try TemporaryDirectory("bike-registry-hosts")
        defer { directory.remove() }
        let database = try await TestDatabase.make(.postgres, in: directory.path)
        try await withTeardown({ await database.drop() }) {
            let refusing = 1  // tcpmux: nothing listens on it here, so loopback refuses at once
            let hosts = database.location.replacingOccurrences(
                of: "@127.0.0.1:", with: "@127.0.0.1:\(refusing),127.0.0.1:")
            let location = hosts + "&target_session_attrs=read-write"
            #expect(location.contains(",127.0.0.1:"), "\(location)")
            let store = try #require(
                try await RegistryStores.open(location, connections: 4, postgresDeadline: .seconds(10))
                    as? PostgresRegistryStore)
            defer { Task { await store.close() } }
            let host = try #require(store.primaryHost)
            #expect(host.hasPrefix("127.0.0.1:") && !host.hasSuffix(":\(refusing)"))
            try await store.takesAWrite()

            let name = try #require(URLComponents(string: database.location)?.path.dropFirst())
            try await TestPostgres.administer(
                "ALTER DATABASE \(name) SET default_transaction_read_only = on",
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\(name)' AND pid <> pg_backend_pid()"
            )
            // Opened now, no host will do.
            await #expect {
                try await RegistryStores.open(location, connections: 2)
            } throws: { error in
                "\(error)".contains("takes no writes (target_session_attrs=read-write)")
                    && "\(error)".contains(":\(refusing): ")
            }
            // The open store: writes refused, then refused at once while no host will do.
            var failedFast = false
            for _ in 0..<100 where !failedFast {
                let started = ContinuousClock.now
                do {
                    try await store.takesAWrite()
                    try await Task.sleep(for: .milliseconds(100))
                } catch {
                    failedFast =
                        "\(error)".contains("no PostgreSQL host takes") && ContinuousClock.now - started < .seconds(1)
                }
            }
            #expect(failedFast, "no host would do, and the store said so at once")

            try await TestPostgres.administer("ALTER DATABASE \(name) RESET default_transaction_read_only")
            var back = false
            for _ in 0..<100 where !back {
                do {
                    try await store.takesAWrite()
                    back = true
                } catch {
                    try await Task.sleep(for: .milliseconds(100))
                }
            }
            #expect(back, "writes taken again once the database takes them")
        }
    }
}
