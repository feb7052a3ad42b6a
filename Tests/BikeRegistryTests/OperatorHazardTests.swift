import BeaconTestSupport
import BikeRegistryCore
import BikeRegistryServer
import BikeRegistryStore
import Foundation
import GRDB
import NIOHTTP1
import Testing

/// What a careless operator, or a crash, could do to a registry without a word (issue 37, item 8): database files
/// anyone on the machine could read, committed data lost with a deleted `-wal`, links built from a request's Host
/// header, a form cookie that would travel over plain http.
@Suite(.timeLimit(.minutes(20))) struct OperatorHazardTests {
    /// The database and every file beside it are the owner's alone under the usual umask (0022, which left them
    /// 0644 with the webhook secrets in them); files an earlier release left readable by anyone are narrowed at
    /// open.
    @Test func theDatabaseFilesAreReadableByTheirOwnerAlone() async throws {
        let directory = try TemporaryDirectory("bike-registry-modes")
        defer { directory.remove() }
        let path = directory.file("registry.sqlite")
        let store = try SQLiteRegistryStore(path: path)
        _ = try await store.addStation(name: "Ace", latitude: 51.5, longitude: -0.2)
        for file in [path, path + "-wal", path + "-shm", path + "-commits"] {
            let mode = try Self.mode(file)
            #expect(mode == 0o600, "\(file): \(String(mode, radix: 8))")
        }
        await store.close()

        // A database an earlier release made, 0644 like its -wal.
        let older = directory.file("older.sqlite")
        let queue = try DatabaseQueue(path: older)
        try await queue.write { db in try db.execute(sql: "PRAGMA journal_mode = WAL; CREATE TABLE t (x)") }
        try queue.close()
        #expect(try Self.mode(older) == 0o644, "the umask this test means")
        let reopened = try SQLiteRegistryStore(path: older)
        #expect(try Self.mode(older) == 0o640, "no longer readable by other users")
        await reopened.close()

        // Under systemd (its StateDirectory=), the service's group may read them too, as the CLI sets.
        let state = try TemporaryDirectory("bike-registry-state")
        defer { state.remove() }
        let added = try await BeacondRun.run(
            executable: "/usr/bin/env",
            [
                "STATE_DIRECTORY=\(state.path)", BeacondRun.registryBinary.path, "station", "add", "Ace",
                "--latitude", "51.5", "--longitude", "0",
            ])
        #expect(added.status == 0, "\(added.stderr)")
        #expect(try Self.mode(state.file("registry.sqlite")) == 0o640)
    }

    /// Committed sightings and registrations that vanish with a deleted `-wal` after a crash are named at the next
    /// start, in an error line; a start that lost nothing says nothing of the kind.
    @Test func committedDataThatVanishedIsNamedAtTheNextStart() async throws {
        let directory = try TemporaryDirectory("bike-registry-ledger")
        defer { directory.remove() }
        let database = directory.file("registry.sqlite")
        let first = try await RegistryProcess.start(database: database, in: directory)
        var bikes: [String] = []
        for minor in 1...2 { bikes.append(try await first.client.register(minor: minor).id) }
        for (index, bike) in (bikes + bikes + [bikes[0]]).enumerated() {
            let sighting = RegistryClient.sighting(
                bikeId: bike, firstSeen: "2024-06-01T08:0\(index):00Z", minor: bikes.firstIndex(of: bike)! + 1)
            #expect(try await first.client.post(sighting, key: first.stationKey).status == 201)
        }
        first.server.process.send(SIGKILL)
        _ = await first.server.waitForExit(seconds: 10)
        #expect(FileManager.default.fileExists(atPath: database + "-wal"), "the commits are in the -wal")
        // What a careless clean-up does after a crash.
        try FileManager.default.removeItem(atPath: database + "-wal")
        try? FileManager.default.removeItem(atPath: database + "-shm")

        let second = try DaemonProcess(
            ["serve", "--listen", "127.0.0.1:0", "--database", database], executable: BeacondRun.registryBinary,
            logDirectory: directory.path, name: "second")
        #expect(await eventually(within: 20) { second.stderr.contains("bike-registry listening") })
        let lines = second.stderr.split(separator: "\n").filter { $0.contains("missing changes it had committed") }
        #expect(lines.count == 1 && lines.first?.contains("error") == true, "\(second.stderr)")
        let line = String(lines.first ?? "")
        #expect(line.contains("5 sightings") && line.contains("2 registrations"), "\(line)")
        second.terminate()
        #expect(await second.waitForExit(seconds: 10) == 0)

        // Stopped cleanly, started again: nothing is missing, and nothing is said.
        let third = try DaemonProcess(
            ["serve", "--listen", "127.0.0.1:0", "--database", database], executable: BeacondRun.registryBinary,
            logDirectory: directory.path, name: "third")
        #expect(await eventually(within: 20) { third.stderr.contains("bike-registry listening") })
        #expect(!third.stderr.contains("missing changes"), "\(third.stderr)")
        third.terminate()
        _ = await third.waitForExit(seconds: 10)
    }

    /// The link to save is built from `--public-url` alone, never from the Host header a request carries; without
    /// one it is relative to the site. The form's cookie is Secure when the public URL is https.
    @Test(arguments: [nil, "https://bikes.example.org"]) func theLinkShownComesFromThePublicURLOnly(publicURL: String?)
        async throws
    {
        let directory = try TemporaryDirectory("bike-registry-links")
        defer { directory.remove() }
        let registry = try await RegistryHarness(.sqlite, directory: directory.path) { $0.publicURL = publicURL }
        try await withTeardown({ await registry.stop() }) {
            let form = try await Page.get(registry, "/")
            let cookie = try #require(form.headers["Set-Cookie"].first)
            #expect(cookie.contains("; Secure") == (publicURL != nil), "\(cookie)")
            let registered = try await Page.register(registry, minor: 7, form: form, host: "evil.example")
            #expect(registered.answer.status == 201)
            let shown = try #require(
                registered.answer.body.firstMatch(of: /id="private-link" href="[^"]+">([^<]+)</)?.output.1)
            #expect(String(shown) == (publicURL ?? "") + registered.path, "\(shown)")
            #expect(!registered.answer.body.contains("evil.example"))
        }
    }

    @Test func aPublicURLThatIsNotOneIsRefused() async throws {
        for url in [
            "ftp://bikes.example.org", "https://bikes.example.org/registry", "https://user@bikes.example.org", "bikes",
        ] {
            let run = try await BeacondRun.run(
                executable: BeacondRun.registryBinary.path,
                ["serve", "--public-url", url, "--database", "/nonexistent/x"])
            #expect(
                run.status == 64 && run.stderr.contains("--public-url is http(s)://HOST[:PORT]"),
                "\(url): \(run.stderr)")
        }
    }

    static func mode(_ path: String) throws -> Int {
        try (FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? -1
    }
}
