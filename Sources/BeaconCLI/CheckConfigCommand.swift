public import ArgumentParser
import BeaconDaemon
import BeaconWire
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
        discussion: "Exit status: 0 when the configuration is good, 78 (EX_CONFIG) when it is not.")

    @OptionGroup public var options: ConfigOptions

    public init() {}

    public func run() throws {
        let (configuration, errors) = options.load(environment: ProcessInfo.processInfo.environment)
        guard errors.isEmpty else {
            printToStandardError(errors.map { "beacond: \($0)\n" }.joined())
            throw ExitCode(78)
        }
        print("""
            configuration is good
              station      \(configuration.stationID) at \(configuration.latitude), \(configuration.longitude)
              regions      \(configuration.regions.map(\.description).joined(separator: ", "))
              capture      \(configuration.backend.rawValue) on \(configuration.adapters.joined(separator: ", "))
              registry     \(configuration.registry ?? "file://\(configuration.stateDirectory)/bikes.json (embedded)")
              state        \(configuration.stateDirectory)
              control      \(configuration.controlSocket)
            """)
    }
}
