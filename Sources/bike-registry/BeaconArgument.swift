import ArgumentParser
import BikeRegistryCore

/// A beacon, or a region, on the command line: `UUID:MAJOR:MINOR` (`beacons revoke`) or `UUID:MAJOR`
/// (`beacons issue --region`).
struct BeaconArgument: ExpressibleByArgument, Sendable {
    let uuid: String
    let major: Int
    let minor: Int?

    init?(argument: String) {
        guard let (uuid, major, minor) = BeaconParser.colonSeparated(argument) else { return nil }
        self.uuid = uuid
        self.major = major
        self.minor = minor
    }
}
