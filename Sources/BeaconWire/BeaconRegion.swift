/// A beacon region, like Core Location's `CLBeaconRegion`: a proximity UUID and, optionally, a major.
public struct BeaconRegion: Hashable, Sendable, CustomStringConvertible {
    public var uuid: BeaconUUID
    public var major: UInt16?

    public init(uuid: BeaconUUID, major: UInt16? = nil) {
        self.uuid = uuid
        self.major = major
    }

    /// Parses `UUID` or `UUID:MAJOR`.
    public init?(_ text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 1 || parts.count == 2, let uuid = BeaconUUID(parts[0]) else { return nil }
        if parts.count == 2 {
            guard let major = UInt16(parts[1]) else { return nil }
            self.init(uuid: uuid, major: major)
        } else {
            self.init(uuid: uuid)
        }
    }

    @inlinable
    public func contains(_ beacon: IBeacon) -> Bool {
        beacon.uuid == uuid && (major == nil || major == beacon.major)
    }

    public var description: String { major.map { "\(uuid):\($0)" } ?? uuid.description }
}
