/// An iBeacon frame: Apple manufacturer data `4C 00 02 15` followed by exactly 21 bytes.
///
/// Layout after the company ID (Apple's published format): type 0x02, length 0x15, 16-byte proximity UUID,
/// major and minor (big-endian, unlike the rest of Bluetooth), measured power at 1 m (signed dBm).
public struct IBeacon: Hashable, Sendable {
    public var uuid: BeaconUUID
    public var major: UInt16
    public var minor: UInt16
    /// Calibrated RSSI at one metre, as the beacon advertises it.
    public var measuredPower: Int8

    @inlinable
    public init(uuid: BeaconUUID, major: UInt16, minor: UInt16, measuredPower: Int8) {
        self.uuid = uuid
        self.major = major
        self.minor = minor
        self.measuredPower = measuredPower
    }

    /// The bytes of an AD structure of type 0xFF after its type byte: company ID (2, little-endian),
    /// then 0x02 0x15 and the 21 beacon bytes.
    @usableFromInline static let manufacturerDataLength = 25

    /// Decodes manufacturer-specific data already known to be Apple's with the iBeacon prefix and length.
    @inlinable @inline(__always)
    init(uncheckedManufacturerData body: UnsafeRawBufferPointer) {
        let high = UInt64(bigEndian: body.loadUnaligned(fromByteOffset: 4, as: UInt64.self))
        let low = UInt64(bigEndian: body.loadUnaligned(fromByteOffset: 12, as: UInt64.self))
        self.uuid = BeaconUUID(rawValue: UInt128(high) << 64 | UInt128(low))
        self.major = UInt16(bigEndian: body.loadUnaligned(fromByteOffset: 20, as: UInt16.self))
        self.minor = UInt16(bigEndian: body.loadUnaligned(fromByteOffset: 22, as: UInt16.self))
        self.measuredPower = Int8(bitPattern: body[24])
    }
}
