public import ArgumentParser
import BeaconCapture
import BeaconDaemon
import BeaconRegistryClient
import BeaconWire
import StationSettings

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `beacond check-config`: lists every configuration error with its key and reason, or says the
/// configuration is good and shows what it amounts to.
public struct CheckConfigCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract: "Check the configuration file and flags; list every error with its key and reason.",
        discussion: "Exit status: 0 when the configuration is good, 78 (EX_CONFIG) when it is not." + "\n\n"
            + ConfigOptions.keyNote)

    @OptionGroup public var options: ConfigOptions

    public init() {}

    public func run() throws {
        let environment = ProcessInfo.processInfo.environment
        var (configuration, errors) = options.load(environment: environment)
        // The API key as `run` would load it: a bad key file stops `run` with 78, so it fails here too.
        var keySource = "none"
        if case .http(_) = configuration.registryLocation {
            do throws(RegistryError) {
                if try configuration.apiKey(environment: environment) != nil {
                    keySource = configuration.apiKeyFile ?? "the systemd credential registry-api-key"
                } else {
                    keySource =
                        "the systemd credential registry-api-key when run by beacond.service (`beacond doctor` checks it)"
                }
            } catch {
                errors.append("api-key-file: \(error.message)")
            }
        }
        guard errors.isEmpty else {
            printToStandardError(errors.map { "beacond: \($0)\n" }.joined())
            throw ExitCode(78)
        }
        print(
            """
            configuration is good
              station      \(configuration.stationID) at \(configuration.latitude), \(configuration.longitude)
              regions      \(configuration.regions.map(\.description).joined(separator: ", "))
              capture      \(configuration.backend.rawValue) on \(configuration.adapters.joined(separator: ", "))
              registry     \(configuration.registryShown)\(keySource == "none" ? "" : "\n  API key      \(keySource)")
              state        \(configuration.stateDirectory)
              control      \(configuration.controlSocket)
            """)
        for note in RotatingBeaconNote.regionsNamingAMajor(configuration.regions) { print("  note         \(note)") }
    }
}
