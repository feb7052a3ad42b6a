import BeaconWire

/// What `check-config` and `doctor` say of a region that names a major: a rotating beacon's identities use every
/// major (docs/rotating-beacon.md), so such a region matches one only by chance. Not an error: fixed beacons under
/// that major are matched as always.
enum RotatingBeaconNote {
    static func regionsNamingAMajor(_ regions: [BeaconRegion]) -> [String] {
        regions.compactMap { region in
            guard let major = region.major else { return nil }
            return
                "region \(region) names major \(major), so it can never match a rotating beacon (region = \(region.uuid) matches both)"
        }
    }
}
