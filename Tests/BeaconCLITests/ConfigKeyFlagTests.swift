import ArgumentParser
import BeaconDaemon
import BeaconTestSupport
import Testing

@testable import BeaconCLI

/// Every configuration key is a flag of the same name, and every such flag reaches the configuration as its key: the
/// key list, the flags and the flags' entries are written in different places, and this is what keeps them together.
@Suite struct ConfigKeyFlagTests {
    @Test func everyKeyIsAFlagOfItsNameThatArrivesAsThatKey() throws {
        var arguments: [String] = []
        for key in DaemonConfiguration.keys { arguments += ["--\(key)", "value-of-\(key)"] }
        let options = try ConfigOptions.parse(arguments)
        let entries = options.flagEntries
        #expect(
            entries.map(\.key).sorted() == DaemonConfiguration.keys.sorted(),
            "a flag without its key, or a key without its flag")
        #expect(entries.allSatisfy { $0.value == "value-of-\($0.key)" }, "each flag's value arrives under its own key")
    }

    @Test func runsHelpListsEveryKey() async throws {
        let help = try await BeacondRun(["run", "--help"]).stdout
        for key in DaemonConfiguration.keys {
            #expect(help.contains("--\(key) ") || help.contains("--\(key),"), "run --help lacks --\(key)")
        }
    }

    @Test func theStateDirectoryKeepsItsShortName() throws {
        #expect(try ConfigOptions.parse(["--state-dir", "/tmp/a"]).flagEntries.first?.value == "/tmp/a")
    }
}
