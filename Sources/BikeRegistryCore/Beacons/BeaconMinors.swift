/// The rules both stores apply to provisioned beacons, kept out of their SQL.
package enum BeaconMinors {
    /// The `count` lowest minors from `first` that are not `held`, or an error saying how many are free.
    package static func free(from first: Int, count: Int, held: Set<Int>) throws(RegistryStoreError) -> [Int] {
        guard (0...65535).contains(first) else { throw RegistryStoreError("the first minor is 0 to 65535") }
        var minors: [Int] = []
        var minor = first
        while minors.count < count && minor <= 65535 {
            if !held.contains(minor) { minors.append(minor) }
            minor += 1
        }
        guard minors.count == count else {
            throw RegistryStoreError(
                "only \(minors.count) minors from \(first) are neither a bike's nor issued: \(count) were asked for")
        }
        return minors
    }

    package static func state(revoked: Bool, claimed: Bool) -> ProvisionedBeacon.State {
        revoked ? .revoked : claimed ? .claimed : .issued
    }

    /// `UUID:MAJOR:MINOR`, as `beacons revoke` takes it.
    package static func name(_ beacon: NewBeacon) -> String { "\(beacon.uuid):\(beacon.major):\(beacon.minor)" }
}
