import ArgumentParser
import Foundation

/// A beacon, or a region, on the command line: `UUID:MAJOR:MINOR` (`beacons revoke`) or `UUID:MAJOR`
/// (`beacons issue --region`).
struct BeaconArgument: ExpressibleByArgument, Sendable {
    let uuid: String
    let major: Int
    let minor: Int?

    init?(argument: String) {
        let parts = argument.split(separator: ":", omittingEmptySubsequences: false)
        guard (2...3).contains(parts.count), let uuid = UUID(uuidString: String(parts[0])),
            let major = Self.number(parts[1])
        else { return nil }
        self.uuid = uuid.uuidString
        self.major = major
        if parts.count == 3 {
            guard let minor = Self.number(parts[2]) else { return nil }
            self.minor = minor
        } else {
            minor = nil
        }
    }

    private static func number(_ text: Substring) -> Int? {
        guard text.allSatisfy(\.isASCII), let value = Int(text), (0...65535).contains(value) else { return nil }
        return value
    }
}
