import BeaconTestSupport
import BikeRegistryCore
import Foundation
import GRDB
import Testing

@testable import BikeRegistryStore

/// A database an earlier bike-registry made (schema v1, before stationsVersion) opens with the stations, bikes and
/// sightings it holds, and gains what this version needs.
@Suite(.timeLimit(.minutes(20))) struct MigrationTests {
    @Test func aVersionOneDatabaseIsCarriedOverWithItsData() async throws {
        let directory = try TemporaryDirectory("bike-registry-migration")
        defer { directory.remove() }
        let path = directory.file("registry.sqlite")
        // v1 as the previous release (0.1.0) wrote it: its statements, word for word, and GRDB's record of them.
        let old = try DatabaseQueue(path: path)
        try await old.write { db in
            try db.execute(sql: "CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY)")
            try db.execute(sql: Self.releasedVersionOne)
            try db.execute(sql: "INSERT INTO grdb_migrations VALUES ('v1')")
            try db.execute(
                sql:
                    "INSERT INTO station (name, keyHash, latitude, longitude, createdAt) VALUES ('Ace', ?, 51.5, -0.2, 1)",
                arguments: [Secrets.hash("bks_old-key")])
        }
        try old.close()

        let store = try SQLiteRegistryStore(path: path)
        try await withTeardown({ await store.close() }) {
            #expect(try await store.station(key: "bks_old-key")?.name == "Ace", "the old station's key still works")
            #expect(try await store.versions() == RegistryVersions(list: 1, stations: 1))
            _ = try await store.addStation(name: "New", latitude: 1, longitude: 2)
            #expect(try await store.versions().stations == 2, "v2's counter moves with every station added")
        }
    }

    /// The file the release before claim codes wrote (Tests/registry-fixtures/make-previous-release, with its binary):
    /// every bike keeps working, counts as claimed, and the stations' list is as it was.
    @Test func thePreviousReleasesFileKeepsEveryBikeWorking() async throws {
        let directory = try TemporaryDirectory("bike-registry-previous-release")
        defer { directory.remove() }
        let fixtures = Fixtures.repositoryRoot.appendingPathComponent("Tests/registry-fixtures")
        let path = directory.file("registry.sqlite")
        try FileManager.default.copyItem(
            atPath: fixtures.appendingPathComponent("previous-release.sqlite").path, toPath: path)
        let made =
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: fixtures.appendingPathComponent("previous-release.json"))) as? [String: Any]
            ?? [:]
        let missing = made["missing"] as? [String: Any] ?? [:]
        let kept = made["kept"] as? [String: Any] ?? [:]
        let missingID = try #require(missing["id"] as? String)
        let keptID = try #require(kept["id"] as? String)

        let old = try DatabaseQueue(path: path)
        let versionBefore = try await old.read { db in try Int64.fetchOne(db, sql: "SELECT version FROM listVersion") }
        try old.close()
        let store = try SQLiteRegistryStore(path: path)
        try await withTeardown({ await store.close() }) {
            #expect(
                try await store.versions().list == versionBefore, "stations notice nothing: the list's ETag is the same"
            )
            let station = try #require(try await store.station(key: made["stationKey"] as? String ?? ""))
            #expect(station.name == "Ace Café")
            let bike = try #require(
                try await store.bike(id: missingID, ownerToken: missing["ownerToken"] as? String ?? ""))
            #expect(bike.missing && bike.target(on: .webhook) == "http://127.0.0.1:9/hook")
            #expect(try await store.bike(id: keptID, ownerToken: kept["ownerToken"] as? String ?? "")?.missing == false)
            #expect(try await store.missingBikes().bikes.map(\.id) == [missingID], "stations' list unchanged")
            #expect(try await store.sightings(bikeId: missingID).count == 1)
            let beacons = try await store.beacons()
            #expect(beacons.map(\.minor) == [101, 102] && beacons.allSatisfy { $0.state == .claimed && !$0.hasCode })
            // Their beacons stay theirs: neither registration by the numbers nor a new issue takes them.
            let again = try await store.register(
                NewBike(
                    uuid: "21EECF71-D5C7-4A00-9B90-27C94B5146EA", major: 1, minor: 101, make: "a", model: "b",
                    colour: "c"))
            guard case .beaconTaken = again else {
                Issue.record("a migrated bike's beacon was registered again")
                return
            }
            let issued = try await store.issueBeacons(
                uuid: "21EECF71-D5C7-4A00-9B90-27C94B5146EA", major: 1, firstMinor: 101, codeHashes: ["x"], now: Date())
            #expect(issued == [103])

            // The missing bike has a report made at the upgrade: it lapses --missing-lapse after, with a reminder first.
            let upgraded = try #require(try await store.openReport(bikeId: missingID))
            #expect(abs(upgraded.madeAt.timeIntervalSinceNow) < 120 && upgraded.lapsesAt == nil, "\(upgraded)")
            #expect(try await store.openReport(bikeId: keptID) == nil)
            let rules = MissingReportRules(lapse: 30 * 86_400, reminder: 3 * 86_400)
            #expect(try await store.sweepReports(rules: rules, now: Date()) == ReportSweep(reminded: 0, lapsed: 0))
            let owedBefore = try await store.notificationCounts().owed
            let lapsesAt = try #require(try await store.openReport(bikeId: missingID)?.lapsesAt)
            #expect(abs(lapsesAt.timeIntervalSince(upgraded.madeAt) - 30 * 86_400) < 0.001)
            #expect(
                try await store.sweepReports(rules: rules, now: lapsesAt.addingTimeInterval(-86_400))
                    == ReportSweep(reminded: 1, lapsed: 0))
            #expect(try await store.notificationCounts().owed == owedBefore + 1, "the reminder, to its webhook")
        }
    }

    static let releasedVersionOne = """
        CREATE TABLE station (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            keyHash TEXT NOT NULL UNIQUE,
            latitude REAL NOT NULL,
            longitude REAL NOT NULL,
            createdAt REAL NOT NULL,
            revokedAt REAL,
            lastRefreshAt REAL,
            lastSightingAt REAL,
            userAgent TEXT
        );
        CREATE TABLE bike (
            id TEXT PRIMARY KEY,
            uuid TEXT NOT NULL,
            major INTEGER NOT NULL,
            minor INTEGER NOT NULL,
            make TEXT NOT NULL,
            model TEXT NOT NULL,
            colour TEXT NOT NULL,
            missing INTEGER NOT NULL DEFAULT 0,
            ownerTokenHash TEXT NOT NULL UNIQUE,
            webhookSecret TEXT NOT NULL,
            webhookURL TEXT,
            ntfyURL TEXT,
            createdAt REAL NOT NULL,
            UNIQUE (uuid, major, minor)
        );
        CREATE INDEX bike_missing ON bike(missing);
        -- bikeId is what the station sent: a sighting of an unknown bike is kept too.
        CREATE TABLE sighting (
            id TEXT PRIMARY KEY,
            stationId INTEGER NOT NULL REFERENCES station(id),
            bikeId TEXT NOT NULL,
            kind TEXT NOT NULL,
            seenAt REAL NOT NULL,
            firstSeen REAL NOT NULL,
            lastSeen REAL NOT NULL,
            proximity TEXT NOT NULL,
            rssi REAL,
            count INTEGER NOT NULL,
            visitId TEXT NOT NULL,
            receivedAt REAL NOT NULL
        );
        CREATE INDEX sighting_bike ON sighting(bikeId, seenAt);
        CREATE INDEX sighting_received ON sighting(receivedAt);
        -- One row per message owed on one channel; its id is the webhook-id of every attempt.
        CREATE TABLE notification (
            id TEXT PRIMARY KEY,
            bikeId TEXT NOT NULL REFERENCES bike(id) ON DELETE CASCADE,
            visitId TEXT NOT NULL,
            type TEXT NOT NULL,
            channel TEXT NOT NULL,
            target TEXT NOT NULL,
            payload TEXT NOT NULL,
            createdAt REAL NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            nextAttemptAt REAL NOT NULL,
            deliveredAt REAL,
            abandonedAt REAL,
            lastError TEXT,
            UNIQUE (visitId, type, channel)
        );
        CREATE INDEX notification_due ON notification(nextAttemptAt) WHERE deliveredAt IS NULL AND abandonedAt IS NULL;
        -- Bumped by every change to the missing list, in the same transaction: the list's ETag.
        CREATE TABLE listVersion (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL);
        INSERT INTO listVersion (id, version) VALUES (1, 1);
        """
}
