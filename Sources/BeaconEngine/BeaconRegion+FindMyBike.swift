public import BeaconWire

extension BeaconRegion {
    /// The FindMyBike region every rider's beacon is configured with: the default when none is configured.
    public static let findMyBike = BeaconRegion(
        uuid: BeaconUUID(rawValue: 0x21EE_CF71_D5C7_4A00_9B90_27C9_4B51_46EA), major: 1)
}
