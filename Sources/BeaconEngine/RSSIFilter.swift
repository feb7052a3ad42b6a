/// Smooths a beacon's RSSI with a one-dimensional Kalman filter.
///
/// Why Kalman rather than the trimmed running average some peers use (Android Beacon Library's 20-second
/// window): it needs two numbers per beacon instead of a window of samples, so ranging 65,536 beacons costs
/// no allocation per advert; and its process noise grows with the time since the last sample, so after a gap
/// the filter trusts a new reading more, where a fixed window would average in stale ones.
public struct RSSIFilter: Hashable, Sendable {
    /// Current estimate, dBm.
    public private(set) var estimate: Double
    /// Variance of the estimate, dB².
    public private(set) var variance: Double

    /// BLE RSSI readings scatter by roughly ±4 dB around the mean (multipath, antenna orientation).
    public static let measurementVariance = 16.0
    /// How fast the true mean may drift, dB² per second. Small, because what matters here is a parked bike:
    /// at one advert a second the filter then weighs each new reading about 8 %, so one multipath dip of
    /// 30 dB moves the estimate by about 2 dB, while after a minute of silence a new reading counts for a third
    /// and after three minutes for a half.
    public static let driftPerSecond = 0.1

    public init(first sample: Int8) {
        estimate = Double(sample)
        variance = Self.measurementVariance
    }

    /// Folds in a reading taken `elapsedSeconds` after the previous one.
    public mutating func update(_ sample: Int8, elapsedSeconds: Double) {
        variance += Self.driftPerSecond * max(0, elapsedSeconds)
        let gain = variance / (variance + Self.measurementVariance)
        estimate += gain * (Double(sample) - estimate)
        variance *= 1 - gain
    }
}
