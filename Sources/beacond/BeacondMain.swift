import ArgumentParser
import BeaconCLI

/// The entry point: the commands live in BeaconCLI, where tests can reach them.
@main
struct BeacondMain: AsyncMainProtocol {
    typealias Command = Beacond
}
