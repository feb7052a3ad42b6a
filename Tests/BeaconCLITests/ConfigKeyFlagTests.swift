import ArgumentParser
import BeaconDaemon
import BeaconTestSupport
import StationSettings
import Testing
import TextFormats

@testable import BeaconCLI

/// Every configuration key is a flag of the same name, and every such flag reaches the configuration as its key: both
/// come from one table (`DaemonConfiguration.table`), and these hold the flags' parsing and help to it.
@Suite(.timeLimit(.minutes(20))) struct ConfigKeyFlagTests {
    @Test func everyKeyIsAFlagOfItsNameThatArrivesAsThatKey() throws {
        var arguments: [String] = []
        for key in DaemonConfiguration.keys { arguments += ["--\(key)", "value-of-\(key)"] }
        let options = try ConfigOptions.parse(arguments)
        let entries = options.flagEntries
        #expect(
            entries.map(\.key).sorted() == DaemonConfiguration.keys.sorted(),
            "a flag without its key, or a key without its flag")
        #expect(entries.allSatisfy { $0.value == "value-of-\($0.key)" }, "each flag's value arrives under its own key")
        // And no flag is declared beside the table's keys.
        #expect(Mirror(reflecting: KeyFlags()).children.count == DaemonConfiguration.table.count)
    }

    @Test func runsHelpListsEveryKey() async throws {
        let help = try await BeacondRun(["run", "--help"]).stdout
        for key in DaemonConfiguration.keys {
            #expect(help.contains("--\(key) ") || help.contains("--\(key),"), "run --help lacks --\(key)")
        }
    }

    @Test func theStateDirectoryKeepsItsShortName() throws {
        let entry = try #require(try ConfigOptions.parse(["--state-dir", "/tmp/a"]).flagEntries.first)
        #expect(entry.key == "state-directory" && entry.value == "/tmp/a")
    }

    @Test func aValueMayStartWithADashOrFollowAnEqualsSign() throws {
        let options = try ConfigOptions.parse([
            "--longitude", "-0.12", "--latitude=-33.9", "--region", "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0",
            "--config", "/nonexistent", "--region=FDA50693-A4E2-4FB1-AFCF-C6EB07647825:7",
        ])
        #expect(options.config == "/nonexistent")
        // In the table's order; a list's values in the order given.
        #expect(
            options.flagEntries.map { "\($0.key)=\($0.value)" } == [
                "latitude=-33.9", "longitude=-0.12", "region=E2C56DB5-DFFB-48D2-B060-D0F5A71096E0",
                "region=FDA50693-A4E2-4FB1-AFCF-C6EB07647825:7",
            ])
        let (configuration, errors) = options.load(environment: [:])
        #expect(errors.count == 1 && errors[0].contains("/nonexistent"), "\(errors)")
        #expect(configuration.longitude == -0.12 && configuration.latitude == -33.9 && configuration.regions.count == 2)
    }

    @Test(arguments: [
        (["--no-such-key", "1"], "Unknown option '--no-such-key'"),
        (["--latitude"], "Missing value for '--latitude <degrees>'"), (["51.5"], "Unexpected argument '51.5'"),
    ])
    func aFlagThatIsNoKeyOrHasNoValueIsAUsageError(arguments: [String], message: String) {
        do {
            _ = try ConfigOptions.parse(arguments)
            Issue.record("\(arguments) parsed")
        } catch {
            #expect(ConfigOptions.message(for: error).contains(message), "\(ConfigOptions.message(for: error))")
        }
    }

    @Test func theTableIsTheOnlyListOfKeys() {
        // Every key in the table is distinct, shown by `settings`, and documented with a value's shape and a meaning.
        let names = DaemonConfiguration.table.map(\.name)
        #expect(Set(names).count == names.count)
        #expect(Set(DaemonConfiguration().settings.keys) == Set(names))
        #expect(DaemonConfiguration.table.allSatisfy { !$0.valueName.isEmpty && $0.help.hasSuffix(".") })
    }
}
