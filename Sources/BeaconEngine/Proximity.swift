#if canImport(Glibc)
import Glibc  // pow, from libm: arithmetic, not I/O
#endif

/// How close a beacon is, in Core Location's categories.
public enum Proximity: String, Hashable, Sendable, CaseIterable {
    case immediate, near, far, unknown

    /// Immediate under half a metre, near under three, far beyond; unknown without a usable distance.
    public init(distance: Double?) {
        guard let distance else {
            self = .unknown
            return
        }
        self = distance < 0.5 ? .immediate : distance < 3 ? .near : .far
    }
}

/// Distance from signal strength, by the log-distance path-loss model.
public enum DistanceEstimate {
    /// Path-loss exponent: 2 is free space, which suits bikes parked in the open outside a café.
    public static let pathLossExponent = 2.0

    /// Metres from a (smoothed) RSSI and the beacon's advertised power at one metre, or nil when either value
    /// is nonsense: measured power must be below 0 and at least −100 dBm, and RSSI between −127 and +20 dBm.
    /// Always finite; beyond 1 km (a value no BLE link produces) the answer is nil too.
    public static func metres(rssi: Double?, measuredPower: Int8) -> Double? {
        guard let rssi, rssi.isFinite, (-127...20).contains(rssi), (-100 ... -1).contains(measuredPower) else {
            return nil
        }
        let metres = pow(10, (Double(measuredPower) - rssi) / (10 * pathLossExponent))
        return metres <= 1_000 ? metres : nil
    }
}
