public import BeaconWire

/// One beacon: proximity UUID, major and minor. What ranging keys on and what a sighting names.
public struct BeaconIdentity: Hashable, Sendable, CustomStringConvertible {
    public var uuid: BeaconUUID
    public var major: UInt16
    public var minor: UInt16

    public init(uuid: BeaconUUID, major: UInt16, minor: UInt16) {
        self.uuid = uuid
        self.major = major
        self.minor = minor
    }

    /// Parses `UUID:MAJOR:MINOR`.
    public init?(_ text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, let uuid = BeaconUUID(parts[0]), let major = UInt16(parts[1]),
            let minor = UInt16(parts[2])
        else { return nil }
        self.init(uuid: uuid, major: major, minor: minor)
    }

    @inlinable
    public func matches(_ beacon: IBeacon) -> Bool {
        beacon.minor == minor && beacon.major == major && beacon.uuid == uuid
    }

    public var description: String { "\(uuid):\(major):\(minor)" }
}
