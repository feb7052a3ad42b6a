import BeaconTestSupport
import Foundation
import Testing

/// What the configuration's users type and see: negative coordinates in the ordinary form, a garbage file shown
/// safely, the API key file checked by `check-config` as `run` checks it, and registry credentials never shown.
@Suite(.timeLimit(.minutes(20))) struct ConfigurationSafetyTests {
    @Test func negativeCoordinatesTakeTheOrdinaryForm() async throws {
        let run = try await BeacondRun([
            "check-config", "--config", "/dev/null", "--latitude", "-33.9", "--longitude", "-0.12",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("at -33.9, -0.12"), "\(run.stdout)")
    }

    @Test func aFileOfBinaryGarbageIsShownEscaped() async throws {
        let directory = try TemporaryDirectory("beacond-config")
        defer { directory.remove() }
        let path = directory.file("garbage.conf")
        try Data(
            "station-id = x\n\u{1B}[31mred\u{07} = 1\nlatitude = \u{1B}]0;title\u{07}\n".utf8 + [0xFF, 0xFE, 0x0A]
        )
        .write(to: URL(fileURLWithPath: path))
        let run = try await BeacondRun(["check-config", "--config", path])
        #expect(run.status == 78)
        #expect(!run.stderr.contains("\u{1B}") && !run.stderr.contains("\u{07}"), "\(run.stderr.debugDescription)")
        #expect(run.stderr.contains(#"line 2: \u{1b}[31mred\u{7}: not a valid key"#), "\(run.stderr)")
        #expect(run.stderr.contains(#"got "\u{1b}]0;title\u{7}""#), "\(run.stderr)")
    }

    @Test(arguments: ["missing", "empty", "directory", "oversized"])
    func checkConfigRefusesTheKeyFileRunWouldRefuse(kind: String) async throws {
        let directory = try TemporaryDirectory("beacond-config")
        defer { directory.remove() }
        let key = directory.file("key")
        switch kind {
        case "empty": try "\n".write(toFile: key, atomically: true, encoding: .utf8)
        case "directory": try FileManager.default.createDirectory(atPath: key, withIntermediateDirectories: true)
        case "oversized": try String(repeating: "k", count: 5_000).write(toFile: key, atomically: true, encoding: .utf8)
        default: break
        }
        let flags = [
            "--config", "/dev/null", "--station-id", "cafe-1", "--registry", "https://registry.example/api",
            "--api-key-file", key,
            "--state-dir", directory.file("state"), "--control-socket", directory.file("c.sock"),
        ]
        let check = try await BeacondRun(["check-config"] + flags)
        #expect(check.status == 78, "\(check.stdout)")
        #expect(check.stderr.contains("API key file") && check.stderr.contains(key), "\(check.stderr)")
        if kind == "oversized" { #expect(check.stderr.contains("larger than the 4096 bytes limit"), "\(check.stderr)") }
        let quiet = Fixtures.repositoryRoot.appendingPathComponent("Fixtures/edge/h4.btsnoop").path
        let run = try await BeacondRun(["run"] + flags + ["--replay", quiet])
        #expect(run.status == 78, "run and check-config agree: \(run.stderr)")
    }

    @Test func registryCredentialsAreNeverShown() async throws {
        let directory = try TemporaryDirectory("beacond-config")
        defer { directory.remove() }
        try "a-key\n".write(toFile: directory.file("key"), atomically: true, encoding: .utf8)
        let url = "http://alice:hunter2@192.0.2.7:9/api?token=tok-123"
        let check = try await BeacondRun([
            "check-config", "--config", "/dev/null", "--station-id", "cafe-1", "--registry", url, "--api-key-file",
            directory.file("key"),
        ])
        #expect(check.status == 0, "\(check.stderr)")
        #expect(check.stdout.contains("http://REDACTED@192.0.2.7:9/api?token=REDACTED"), "\(check.stdout)")
        #expect(!check.stdout.contains("hunter2") && !check.stdout.contains("tok-123"))

        // The daemon: from a cached list it starts at once; the start log names the registry redacted and warns
        // that plain http to another machine carries the key readable. A capture with no missing bike drains at once.
        let state = directory.file("state")
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        let cache = #"{"version":1,"fetchedAt":0,"source":"\#(url)","validators":{},"bikes":[]}"#
        try cache.write(toFile: state + "/missing-bikes.json", atomically: true, encoding: .utf8)
        let quiet = Fixtures.repositoryRoot.appendingPathComponent("Fixtures/edge/h4.btsnoop").path
        let run = try await BeacondRun([
            "run", "--config", "/dev/null", "--station-id", "cafe-1", "--registry", url, "--api-key-file",
            directory.file("key"),
            "--state-dir", state, "--control-socket", directory.file("c.sock"), "--replay", quiet, "--speed", "0",
            "--exit-when-drained",
        ])
        #expect(run.stderr.contains("plain http:// on another machine"), "\(run.stderr)")
        #expect(
            !run.stderr.contains("hunter2") && !run.stderr.contains("tok-123") && !run.stderr.contains("a-key"),
            "\(run.stderr)")
    }
}
