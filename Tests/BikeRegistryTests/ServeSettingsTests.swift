import BeaconTestSupport
import Foundation
import Testing

/// `bike-registry serve`'s settings file and environment, run as an operator's unit runs it: each key a long option,
/// the command line over the environment over the file, and every mistake named by its line or variable.
@Suite(.timeLimit(.minutes(20))) struct ServeSettingsTests {
    @Test func theFileAndTheEnvironmentSetServeAndTheCommandLineWins() async throws {
        let directory = try TemporaryDirectory("bike-registry-settings")
        defer { directory.remove() }
        let database = directory.file("from-file.sqlite")
        // The file's listen and log-level are not values serve takes: the command line and the environment must
        // win over them for the server to start at all.
        try """
        # as the package ships it, with an operator's lines
        listen = 8180
        database = \(database)
        registration = open
        log-level = "not a level"
        allow-private-webhooks = yes
        drain-delay = 0
        """.write(toFile: directory.file("registry.conf"), atomically: true, encoding: .utf8)
        let notify = try NotifyListener(path: directory.file("notify.sock"))
        let server = try DaemonProcess(
            ["serve", "--config", directory.file("registry.conf"), "--listen", "127.0.0.1:0"],
            executable: BeacondRun.registryBinary,
            environment: ["NOTIFY_SOCKET": notify.path, "BIKE_REGISTRY_LOG_LEVEL": "debug"],
            logDirectory: directory.path, name: "registry")
        let ready = await notify.firstIndex(within: 60) { $0.contains("READY=1") }
        #expect(ready != nil, "\(server.stderr)")
        #expect(FileManager.default.fileExists(atPath: database), "the file's database: \(server.stderr)")
        #expect(server.stderr.contains("open registration"), "the file's registration: \(server.stderr)")
        #expect(server.stderr.contains(" debug bike-registry"), "the environment's log level: \(server.stderr)")
        server.terminate()
        #expect(await server.waitForExit(seconds: 30) == 0)
    }

    @Test func mistakesInTheFileAreNamedByLineAndServeDoesNotStart() async throws {
        let directory = try TemporaryDirectory("bike-registry-settings-mistakes")
        defer { directory.remove() }
        try """
        listen = 127.0.0.1:0
        listn = 127.0.0.1:8180
        allow-private-webhooks = maybe
        this is not a setting
        listen = 127.0.0.1:1
        config = /etc/elsewhere.conf
        """.write(toFile: directory.file("bad.conf"), atomically: true, encoding: .utf8)
        let run = try await BikeRegistryRun.run(["serve", "--config", directory.file("bad.conf")])
        let path = directory.file("bad.conf")
        #expect(run.status == 78, "\(run.stderr)")
        for expected in [
            "\(path) line 2: listn: not a setting of serve",
            "\(path) line 3: allow-private-webhooks: expected true or false, got \"maybe\"",
            "\(path): line 4: this is not a setting: expected key = value",
            "\(path) line 5: listen: given twice (first in \(path) line 1)",
            "\(path) line 6: config: not a setting of serve",
        ] {
            #expect(run.stderr.contains(expected), "\(expected) in \(run.stderr)")
        }
        let missing = try await BikeRegistryRun.run(["serve", "--config", directory.file("absent.conf")])
        #expect(missing.status == 78 && missing.stderr.contains("absent.conf: no such file"), "\(missing.stderr)")
    }

    @Test func aValueServeRefusesNamesWhereItWasSet() async throws {
        let directory = try TemporaryDirectory("bike-registry-settings-values")
        defer { directory.remove() }
        let path = directory.file("values.conf")
        try "retention-days = 0\n".write(toFile: path, atomically: true, encoding: .utf8)
        let fromFile = try await BikeRegistryRun.run(["serve", "--config", path])
        #expect(fromFile.status == 64, "\(fromFile.stderr)")
        #expect(
            fromFile.stderr.contains("--retention-days is at least 1 (retention-days is set in \(path) line 1)"),
            "\(fromFile.stderr)")
        let fromEnvironment = try await BeacondRun.run(
            executable: "/usr/bin/env",
            ["BIKE_REGISTRY_RETENTION_DAYS=soon", BeacondRun.registryBinary.path, "serve", "--config", "/dev/null"])
        #expect(fromEnvironment.status == 64, "\(fromEnvironment.stderr)")
        #expect(
            fromEnvironment.stderr.contains("(retention-days is set in BIKE_REGISTRY_RETENTION_DAYS)"),
            "\(fromEnvironment.stderr)")
        // The command line's own value is its own: no origin is claimed for it.
        let fromCommandLine = try await BikeRegistryRun.run([
            "serve", "--config", path, "--retention-days", "0",
        ])
        #expect(
            fromCommandLine.status == 64 && !fromCommandLine.stderr.contains("is set in"), "\(fromCommandLine.stderr)")
    }

    /// The example the package installs as /etc/bike-registry/bike-registry.conf: each commented key, uncommented,
    /// is a setting serve takes with the value shown (all but listen, which the check refuses on purpose so that
    /// nothing starts).
    @Test func theShippedExampleNamesOnlySettingsServeTakes() async throws {
        let directory = try TemporaryDirectory("bike-registry-settings-example")
        defer { directory.remove() }
        let example = try String(
            contentsOf: Fixtures.repositoryRoot.appendingPathComponent("systemd/bike-registry.conf"), encoding: .utf8)
        let lines = example.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("# "), line.contains(" = "), !line.contains("`") else { return nil }
            let setting = String(line.dropFirst(2))
            // The relay needs its password and public URL together; smtp alone would be refused for another reason.
            return setting.hasPrefix("smtp") || setting.hasPrefix("mail-from") ? nil : setting
        }
        #expect(lines.count >= 10, "\(lines)")
        try lines.joined(separator: "\n").write(
            toFile: directory.file("example.conf"), atomically: true, encoding: .utf8)
        let run = try await BikeRegistryRun.run(["serve", "--config", directory.file("example.conf"), "--listen", "x"])
        #expect(run.status == 64 && run.stderr.contains("--listen is HOST:PORT"), "\(run.stderr)")
        #expect(!run.stderr.contains("not a setting"), "\(run.stderr)")
    }
}
