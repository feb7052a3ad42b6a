import BeaconTestSupport
import BikeRegistryCore
import Foundation
import GRDB
import NIOConcurrencyHelpers
import NIOHTTP1
import Testing

@testable import BikeRegistryStore

#if canImport(Glibc)
import Glibc
#endif

/// Issue 53: `bike-registry backup --to FILE` of a SQLite registry while a station posts to it, and `bike-registry
/// check`. The copy is one file, 0600, never over another; it passes the check and holds every sighting answered 2xx
/// before it began; a registry started on it serves every owner. A damaged copy fails the check, saying why.
@Suite(.timeLimit(.minutes(20))) struct BackupTests {
    static func command(_ arguments: [String]) async throws -> (status: Int32, stdout: String, stderr: String) {
        let run = try await BeacondRun.run(executable: BeacondRun.registryBinary.path, arguments)
        return (run.status, run.stdout, run.stderr)
    }

    @Test func aBackupTakenWhileStationsPostHoldsWhatWasAnsweredAndServesEveryOwner() async throws {
        let directory = try TemporaryDirectory("bike-registry-backup")
        defer { directory.remove() }
        let database = directory.file("registry.sqlite")
        let process = try await RegistryProcess.start(database: database, in: directory)
        let registry = process.client
        var registered: [(id: String, token: String)] = []
        for minor in 101...120 {
            let bike = try await registry.register(minor: minor)
            registered.append((bike.id, bike.token))
        }
        let owners = registered

        // Two stations' worth of sightings, about 100 a second, each noted with when it was answered 2xx.
        let answered = Answered()
        let key = process.stationKey
        let posting = Task {
            await withTaskGroup(of: Void.self) { group in
                for lane in 0..<2 {
                    group.addTask {
                        var count = 0
                        while !Task.isCancelled {
                            let bike = owners[(count * 2 + lane) % owners.count]
                            let sighting = RegistryClient.sighting(
                                bikeId: bike.id, id: UUID().uuidString.lowercased(), kind: "enter",
                                firstSeen: "2024-06-01T08:00:30Z", lastSeen: nil, minor: 101)
                            if let answer = try? await registry.post(sighting, key: key),
                                (200..<300).contains(answer.status)
                            {
                                answered.list.withLockedValue { $0.append((sighting.id, .now)) }
                            }
                            count += 1
                            try? await Task.sleep(for: .milliseconds(20))
                        }
                    }
                }
            }
        }
        // A hundred answered first (two seconds here; longer beside the whole suite), and more after.
        for _ in 0..<600 where answered.list.withLockedValue({ $0.count }) < 100 {
            try await Task.sleep(for: .milliseconds(50))
        }
        let began = ContinuousClock.now
        let backup = directory.file("backup.sqlite")
        let taken = try await Self.command(["backup", "--to", backup, "--database", database])
        let afterward = answered.list.withLockedValue { $0.count } + 20
        for _ in 0..<600 where answered.list.withLockedValue({ $0.count }) < afterward {
            try await Task.sleep(for: .milliseconds(50))
        }
        posting.cancel()
        await posting.value
        let before = answered.list.withLockedValue { $0.filter { $0.at < began }.map(\.id) }
        let all = answered.list.withLockedValue { $0.count }
        #expect(taken.status == 0, "\(taken.stderr)")
        #expect(
            taken.stdout.contains("integrity ok, schema \(RegistrySchema.migrations.last!.identifier)"),
            "\(taken.stdout)")
        #expect(before.count >= 100 && all > before.count, "\(before.count) answered before the backup, \(all) in all")

        var status = stat()
        #expect(stat(backup, &status) == 0 && status.st_mode & 0o777 == 0o600)
        #expect(!FileManager.default.fileExists(atPath: backup + "-wal"), "one file, no -wal beside it")
        let header = try #require(FileManager.default.contents(atPath: backup)).prefix(20)
        #expect(
            Array(header.suffix(2)) == [1, 1], "a rollback journal's file (WAL's is 2, 2): copied, it stays one file")
        let held = try await DatabaseQueue(path: backup).read { db in
            Set(try String.fetchAll(db, sql: "SELECT id FROM sighting"))
        }
        #expect(Set(before).subtracting(held).isEmpty, "every sighting answered before the backup began is in it")
        let checked = try await Self.command(["check", "--database", backup, "--json"])
        #expect(checked.status == 0, "\(checked.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(checked.stdout.utf8)) as? [String: Any])
        #expect(report["passed"] as? Bool == true && report["integrity"] as? [String] == ["ok"], "\(report)")
        #expect(report["bikes"] as? Int == owners.count)

        // Never over a file: a second backup to the same name is refused and changes nothing.
        let size = try FileManager.default.attributesOfItem(atPath: backup)[.size] as? Int
        let again = try await Self.command(["backup", "--to", backup, "--database", database])
        #expect(again.status == 73 && again.stderr.contains("exists already"), "\(again)")
        #expect(try FileManager.default.attributesOfItem(atPath: backup)[.size] as? Int == size)

        process.server.terminate()
        #expect(await process.server.waitForExit(seconds: 10) == 0)
        // A registry started on the backup serves every owner.
        let restored = try await RegistryProcess.start(
            database: backup, in: directory, addStation: false, name: "restored")
        for owner in owners {
            let answer = try await restored.client.request(.GET, "/owner/bikes/\(owner.id)", bearer: owner.token)
            #expect(answer.status == 200, "\(owner.id): \(answer.status)")
        }
        restored.server.terminate()
        #expect(await restored.server.waitForExit(seconds: 10) == 0)
    }

    @Test func aDamagedCopyFailsItsCheckAndPostgresIsSentToPgDump() async throws {
        let directory = try TemporaryDirectory("bike-registry-check")
        defer { directory.remove() }
        let database = directory.file("registry.sqlite")
        let store = try SQLiteRegistryStore(path: database)
        let key = try await store.addStation(name: "Ace Café", latitude: 51.5, longitude: -0.27)
        let station = try #require(try await store.station(key: key))
        for index in 0..<2_000 {
            var report = SightingReport(
                sightingId: UUID().uuidString.lowercased(), bikeId: "bike-\(index)", kind: .enter, date: Date(),
                firstSeen: Date(), lastSeen: Date(), proximity: "near", rssi: -60, count: 1)
            report.heardMinor = index
            _ = try await store.record(report, from: station)
        }
        await store.close()
        let copy = directory.file("copy.sqlite")
        #expect(try await Self.command(["backup", "--to", copy, "--database", database]).status == 0)
        #expect(try await Self.command(["check", "--database", copy]).status == 0)

        // A page in the middle of the sightings' table overwritten: the check says so, and exits 1.
        let file = try #require(FileHandle(forUpdatingAtPath: copy))
        let length = try file.seekToEnd()
        try file.seek(toOffset: length / 2 / 4096 * 4096 + 100)
        file.write(Data(repeating: 0xA5, count: 2_000))
        try file.close()
        let damaged = try await Self.command(["check", "--database", copy])
        #expect(damaged.status == 1 || damaged.status == 66, "\(damaged)")
        #expect(
            damaged.stderr.contains("did not pass its check") || damaged.stderr.contains("cannot check"), "\(damaged)")

        let postgres = try await Self.command([
            "backup", "--to", directory.file("pg"), "--database", "postgres://u@127.0.0.1/db",
        ])
        #expect(postgres.status == 64 && postgres.stderr.contains("pg_dump"), "\(postgres)")
        let missing = try await Self.command(["check", "--database", directory.file("nothing.sqlite")])
        #expect(missing.status == 66 && missing.stderr.contains("no database file"), "\(missing)")
    }
}

/// The sightings answered 2xx, each with when.
private final class Answered: Sendable {
    let list = NIOLockedValueBox([(id: String, at: ContinuousClock.Instant)]())
}
