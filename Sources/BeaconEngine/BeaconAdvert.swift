public import BeaconWire

/// An iBeacon advert as the engine sees it: what was heard, when and how strongly, by which adapter.
///
/// The sender's MAC address is deliberately absent: nothing the engine holds or reports can identify a rider's
/// beacon by its address, and the value stays small enough (four machine words) to pass through the ring
/// buffer as plain integers.
public struct BeaconAdvert: Hashable, Sendable {
    /// Wall-clock time the advert was received (the capture's own timestamp in a replay).
    public var time: CaptureTime
    public var beacon: IBeacon
    /// nil when the controller did not measure it (HCI reports 127).
    public var rssi: Int8?
    public var adapter: UInt16?

    @inlinable
    public init(time: CaptureTime, beacon: IBeacon, rssi: Int8?, adapter: UInt16?) {
        self.time = time
        self.beacon = beacon
        self.rssi = rssi
        self.adapter = adapter
    }

    /// The iBeacon part of a decoded advert, or nil for any other kind. Captures without timestamps
    /// (plain hex text) get `fallbackTime`.
    @inlinable
    public init?(_ advert: Advert, fallbackTime: CaptureTime = CaptureTime(nanosecondsSinceEpoch: 0)) {
        guard let beacon = advert.beacon else { return nil }
        self.init(time: advert.time ?? fallbackTime, beacon: beacon, rssi: advert.rssi, adapter: advert.adapter)
    }
}

extension BeaconAdvert {
    /// The advert as four 64-bit words: time, UUID high, UUID low, then major, minor, power, RSSI and adapter.
    /// Absent RSSI is stored as 127 (HCI's own "not available"), absent adapter as 0xFFFF.
    @usableFromInline typealias Words = (UInt64, UInt64, UInt64, UInt64)

    @inlinable
    var words: Words {
        var packed = UInt64(beacon.major) << 48 | UInt64(beacon.minor) << 32
        packed |= UInt64(UInt8(bitPattern: beacon.measuredPower)) << 24
        packed |= UInt64(UInt8(bitPattern: rssi ?? 127)) << 16
        packed |= UInt64(adapter ?? 0xFFFF)
        let uuid = beacon.uuid.rawValue
        return (
            UInt64(bitPattern: time.nanosecondsSinceEpoch), UInt64(truncatingIfNeeded: uuid >> 64),
            UInt64(truncatingIfNeeded: uuid), packed
        )
    }

    @inlinable
    init(words: Words) {
        let packed = words.3
        let rssi = Int8(bitPattern: UInt8(truncatingIfNeeded: packed >> 16))
        let adapter = UInt16(truncatingIfNeeded: packed)
        self.init(
            time: CaptureTime(nanosecondsSinceEpoch: Int64(bitPattern: words.0)),
            beacon: IBeacon(
                uuid: BeaconUUID(rawValue: UInt128(words.1) << 64 | UInt128(words.2)),
                major: UInt16(truncatingIfNeeded: packed >> 48), minor: UInt16(truncatingIfNeeded: packed >> 32),
                measuredPower: Int8(bitPattern: UInt8(truncatingIfNeeded: packed >> 24))),
            rssi: rssi == 127 ? nil : rssi,
            adapter: adapter == 0xFFFF ? nil : adapter)
    }
}
