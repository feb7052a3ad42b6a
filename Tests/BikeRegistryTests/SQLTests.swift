import BeaconTestSupport
import BikeRegistryCore
import Foundation
import NIOConcurrencyHelpers
import Testing

@testable import BikeRegistryStore

/// The registry's SQL written once (issue 51): a statement's placeholders for each dialect, its values never in its
/// text, the words the dialects differ in, and transactions that are all or nothing on both databases.
@Suite(.timeLimit(.minutes(20))) struct SQLTests {
    @Test func eachDialectGetsItsPlaceholdersAndItsOwnWords() {
        let id = "bike_1"
        let statement: SQL = "SELECT 1 FROM bike WHERE id = \(id) AND minor = \(7) \(SQL.forUpdate)"
        let sqlite = statement.rendered(for: .sqlite)
        let postgres = statement.rendered(for: .postgres)
        #expect(sqlite.text == "SELECT 1 FROM bike WHERE id = ? AND minor = ? ")
        #expect(postgres.text == "SELECT 1 FROM bike WHERE id = $1 AND minor = $2 FOR UPDATE")
        #expect(sqlite.values == [.text("bike_1"), .integer(7)] && postgres.values == sqlite.values)
        let lock = SQL.postgresOnly("SELECT pg_advisory_xact_lock(hashtext(\(id)))")
        #expect(lock.rendered(for: .sqlite).text.isEmpty && lock.rendered(for: .sqlite).values.isEmpty)
        #expect(lock.rendered(for: .postgres) == ("SELECT pg_advisory_xact_lock(hashtext($1))", [.text("bike_1")]))
    }

    @Test func aValueIsNeverWrittenIntoTheText() {
        let hostile = "x'); DROP TABLE bike; --"
        let missing: String? = nil
        let statement: SQL =
            "UPDATE bike SET make = \(hostile), model = \(missing) WHERE id = \(Date(timeIntervalSince1970: 2))"
        let (text, values) = statement.rendered(for: .postgres)
        #expect(!text.contains("DROP") && text == "UPDATE bike SET make = $1, model = $2 WHERE id = $3")
        #expect(values == [.text(hostile), .null(.text), .real(2)], "a NULL keeps its type; a time is seconds")
    }

    @Test func aRowSaysWhichColumnIsNotWhatWasAsked() throws {
        let row = SQLRow(values: [.text("a"), .null(.unknown), .integer(1)])
        #expect(try row.decode(0) as String == "a")
        #expect(try row.decode(1) as String? == nil)
        #expect(try row.decode(2) as Bool == true, "SQLite's boolean is an integer")
        #expect(try row.decode(2) as Double == 1)
        #expect(throws: RegistryStoreError.self) { try row.decode(0) as Int }
        #expect(throws: RegistryStoreError.self) { try row.decode(3) as String }
    }

    /// GRDB lets its `Database` be used only on its own thread: the body runs there, whether it suspends or not.
    @Test func anAsyncBodyRunsToItsEndOnTheCallingThread() throws {
        let caller = pthread_self()
        let ran = NIOLockedValueBox<[Bool]>([])
        let result = try CallingThreadExecutor.run {
            ran.withLockedValue { $0.append(pthread_equal(pthread_self(), caller) != 0) }
            try await Task.sleep(for: .milliseconds(20))  // away, and back to the waiting thread
            ran.withLockedValue { $0.append(pthread_equal(pthread_self(), caller) != 0) }
            return 42
        }
        #expect(result == 42 && ran.withLockedValue { $0 } == [true, true])
        #expect(throws: RegistryStoreError.self) {
            try CallingThreadExecutor.run { () async throws -> Int in throw RegistryStoreError("refused") }
        }
    }

    /// A transaction's body that throws after writing leaves nothing of it, on both databases.
    @Test(arguments: StoreKind.allCases) func aTransactionIsAllOrNothing(store: StoreKind) async throws {
        let directory = try TemporaryDirectory("bike-registry-sql")
        defer { directory.remove() }
        let database = try await TestDatabase.make(store, in: directory.path)
        let opened = try await database.open()
        try await withTeardown({
            await opened.close()
            await database.drop()
        }) {
            let sql = try #require(opened as? any SQLRegistryStore)
            await #expect(throws: RegistryStoreError.self) {
                try await Self.addThenRefuse(sql)
            }
            #expect(try await opened.stations().isEmpty, "the station added before the refusal is not kept")
            #expect(try await opened.versions().stations == 1)
        }
    }

    private static func addThenRefuse(_ store: some SQLRegistryStore) async throws {
        try await store.database.transaction { connection in
            try await connection.execute(
                "INSERT INTO station (name, keyHash, latitude, longitude, createdAt) VALUES ('Ace', 'h', 1, 2, 3)")
            try await connection.execute(RegistrySQL.bumpStationsVersion)
            throw RegistryStoreError("refused")
        }
    }

    /// Migration v11 carries a database of the previous release's shape over: each bike's webhook, ntfy topic and
    /// address (with its state, failure and keys) become its targets, its columns go, and what worked still does.
    @Test(arguments: StoreKind.allCases) func theBikesTargetsMoveToTheTargetTable(store: StoreKind) async throws {
        let directory = try TemporaryDirectory("bike-registry-v11")
        defer { directory.remove() }
        let database = try await TestDatabase.make(store, in: directory.path)
        let previous = RegistrySchema.migrations.prefix { $0.identifier != "v11-notification-targets" }
        let dialect: RegistrySchema.Dialect = store == .sqlite ? .sqlite : .postgres
        let table = database.migrationsTable
        try await database.execute(
            ["CREATE TABLE \(table) (identifier TEXT NOT NULL PRIMARY KEY)"]
                + previous.flatMap { $0.statements(dialect) + ["INSERT INTO \(table) VALUES ('\($0.identifier)')"] }
                + [
                    """
                    INSERT INTO bike (id, uuid, major, minor, make, model, colour, missing, ownerTokenHash, webhookSecret,
                                      webhookURL, ntfyURL, createdAt, email, emailState, emailFailure,
                                      emailUnsubscribeKey, emailCodeHash, emailCodeExpiresAt)
                    VALUES ('bike_a', 'U', 1, 1, 'm', 'm', 'c', TRUE, '\(Secrets.hash("bko_a"))', 'whsec_a',
                            'https://hooks.example.org/a', 'https://ntfy.sh/a', 1, 'a@example.com', 'failing',
                            'the relay said no', 'key_a', NULL, NULL)
                    """,
                    """
                    INSERT INTO bike (id, uuid, major, minor, make, model, colour, missing, ownerTokenHash, webhookSecret,
                                      createdAt, email, emailState, emailUnsubscribeKey, emailCodeHash, emailCodeExpiresAt)
                    VALUES ('bike_b', 'U', 1, 2, 'm', 'm', 'c', FALSE, '\(Secrets.hash("bko_b"))', 'whsec_b', 1,
                            'b@example.com', 'unconfirmed', 'key_b', '\(Secrets.hash("code_b"))', 4000000000)
                    """,
                ])
        let opened = try await database.open()
        try await withTeardown({
            await opened.close()
            await database.drop()
        }) {
            let a = try #require(try await opened.bike(id: "bike_a", ownerToken: "bko_a"))
            #expect(
                a.target(on: .webhook) == "https://hooks.example.org/a" && a.target(on: .ntfy) == "https://ntfy.sh/a")
            #expect(a.target(on: .email) == nil, "a failing address gets nothing")
            #expect(
                a.email
                    == OwnerEmail(
                        address: "a@example.com", state: .failing, failure: "the relay said no", unsubscribeKey: "key_a"
                    ))
            #expect(try await opened.bike(unsubscribeKey: "key_a")?.id == "bike_a")
            #expect(try await opened.emailCounts() == EmailCounts(confirmed: 0, unconfirmed: 1, failing: 1))
            #expect(try await opened.confirmEmail(code: "code_b", now: Date()), "its code still confirms")
            #expect(try await opened.bike(id: "bike_b", ownerToken: "bko_b")?.target(on: .email) == "b@example.com")
            #expect(try await opened.missingBikes().bikes.map(\.id) == ["bike_a"])
            #expect(try await opened.delete(id: "bike_a", ownerToken: "bko_a"), "its targets go with it")
            #expect(try await opened.bike(unsubscribeKey: "key_a") == nil)
        }
    }
}
